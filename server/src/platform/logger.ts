import pino, { type Logger } from 'pino';
import { redactCredentials } from './redaction';

/** Names a secret travels under, in bodies and log fields. */
const secretNames = [
  'password',
  'refreshToken',
  'accessToken',
  'secretKey',
  'secret',
  'apiKey',
  'token',
  'otp',
  'key',
  'pageCredential',
  'ticket',
];

/** Headers that carry credentials (`apikey` is the former key header, still sent by some). */
const secretHeaders = [
  'authorization',
  'x-api-key',
  'x-access-token',
  'x-signing-token',
  'apikey',
  'cookie',
];

/**
 * Paths never written to logs. Secrets reach the logger only by mistake, so the list covers the
 * header and body names a secret can travel under, at the top level and up to two levels down
 * (`body.password`, `req.body.password`, `req.headers.authorization`). Paths cannot look into
 * strings: messages must never carry a secret (the auth errors name no key, token or password),
 * and every written line goes through `redactCredentials`, which removes the credentials of any
 * URL quoted in it (the signing page links' tokens, `?token=`, a presigned URL's signature…).
 */
export const redactedPaths = [
  ...secretNames.flatMap((name) => [name, `*.${name}`, `*.*.${name}`]),
  ...secretHeaders.flatMap((name) => [`headers["${name}"]`, `*.headers["${name}"]`]),
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: redactedPaths, censor: '[redacted]' },
      hooks: { streamWrite: redactCredentials },
    },
    destination,
  );
}

export type { Logger };
