import pino, { type Logger } from 'pino';

/**
 * Paths never written to logs. Secrets reach the logger only by mistake, so the list covers the
 * header and body names a secret can travel under.
 */
export const redactedPaths = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers["x-access-token"]',
  'req.headers.cookie',
  '*.password',
  '*.refreshToken',
  '*.accessToken',
  '*.secretKey',
  '*.secret',
  '*.otp',
  '*.key',
  'password',
  'refreshToken',
  'accessToken',
  'secretKey',
  'secret',
  'otp',
  'key',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: redactedPaths, censor: '[redacted]' } }, destination);
}

export type { Logger };
