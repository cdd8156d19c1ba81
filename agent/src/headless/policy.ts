/**
 * The headless agent's stand-in for the user: a local policy file says which page origins may
 * connect, which signatures are consented to without a window, and where each token's PIN comes
 * from (a file or an environment variable; inline only in a file no one else can read).
 */
import { readFile, stat } from 'node:fs/promises';
import { firstIssue, plainIssues } from '@esign/shared';
import { z } from 'zod';
import type { PinQuestion, SignConsent, UserPrompts } from '../core';
import { AgentFailure, ConfigurationError, webOriginSchema } from '../core';

/** Which token (and certificate) a rule is about; every field given must match. */
const tokenMatch = z.object({
  tokenLabel: z.string().min(1).optional(),
  tokenSerial: z.string().min(1).optional(),
  /** A part of the certificate's subject, e.g. `CN=Nguyen Van A`. */
  certificateSubject: z.string().min(1).optional(),
});

const pinSource = z.union([
  z.object({ file: z.string().min(1) }).strict(),
  z
    .object({ env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a variable name') })
    .strict(),
  z.object({ value: z.string().min(1) }).strict(),
]);

const policySchema = z
  .object({
    /** Page origins admitted; any other is refused (there is nobody to ask). */
    allowedOrigins: z.array(webOriginSchema).default([]),
    /** Signatures consented to: a request matching no rule is declined. */
    autoConsent: z
      .array(tokenMatch.extend({ origins: z.array(webOriginSchema).min(1) }))
      .default([]),
    /** PIN sources, the first matching rule wins; a token matching none is not logged in to. */
    pins: z.array(tokenMatch.extend({ pin: pinSource })).default([]),
    /** Refuse a `sign` without a valid server ticket (default: yes; nobody watches). */
    requireTicket: z.boolean().default(true),
    /** Signing servers whose tickets are accepted, beside the settings' `ticketServers`. */
    ticketServers: z.array(webOriginSchema).default([]),
    /** The settings file; default the user's. */
    settingsFile: z.string().min(1).optional(),
  })
  .strict();

export type HeadlessPolicy = z.infer<typeof policySchema>;
type TokenMatch = z.infer<typeof tokenMatch>;

/** Readable by group or others: refused for a file holding a PIN. */
const SHARED_READ = 0o044;

async function assertPrivate(file: string, what: string): Promise<void> {
  if (process.platform === 'win32') return; // NTFS rights are not mode bits; the profile folder is private.
  const mode = (await stat(file)).mode;
  if ((mode & SHARED_READ) !== 0) {
    throw new ConfigurationError(
      `${file} holds ${what} and is readable by other users (mode ${(mode & 0o777).toString(8)}); run chmod 600 ${file}`,
    );
  }
}

/** Reads and checks a policy file. A PIN written in it requires the file to be private. */
export async function loadPolicy(file: string): Promise<HeadlessPolicy> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new ConfigurationError(
      `${file}: ${error instanceof SyntaxError ? 'not valid JSON' : (error as Error).message}`,
    );
  }
  const result = policySchema.safeParse(raw, { error: plainIssues });
  if (!result.success) {
    throw new ConfigurationError(
      `${file}: ${firstIssue(result.error, (where) => where || 'policy')}`,
    );
  }
  const policy = result.data;
  if (policy.pins.some((rule) => 'value' in rule.pin)) await assertPrivate(file, 'a PIN');
  for (const rule of policy.pins) {
    if ('file' in rule.pin) await assertPrivate(rule.pin.file, 'a PIN');
  }
  return policy;
}

function matches(
  rule: TokenMatch,
  token: { label: string; serialNumber: string },
  subject: string,
): boolean {
  return (
    (rule.tokenLabel === undefined || rule.tokenLabel === token.label) &&
    (rule.tokenSerial === undefined || rule.tokenSerial === token.serialNumber) &&
    (rule.certificateSubject === undefined || subject.includes(rule.certificateSubject))
  );
}

async function readPin(
  source: HeadlessPolicy['pins'][number]['pin'],
  env: NodeJS.ProcessEnv,
): Promise<string | null> {
  if ('value' in source) return source.value;
  if ('env' in source) return env[source.env] ?? null;
  // Read at each use: a rotated PIN file needs no restart. One trailing newline is not the PIN's.
  await assertPrivate(source.file, 'a PIN');
  return (await readFile(source.file, 'utf8')).replace(/\r?\n$/, '');
}

/**
 * The user's three answers from the policy. A token reporting few tries left gets no PIN: the
 * policy's PIN has just failed, and trying it again would lock the token. That refusal is
 * PIN_TRIES_LOW, not USER_CANCELLED: nobody closed a window, and the fix is a person entering
 * the right PIN once (which clears the token's flag), then the policy's PIN source.
 */
export function policyPrompts(
  policy: HeadlessPolicy,
  log: (message: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): UserPrompts {
  return {
    approveOrigin: async (candidate) => policy.allowedOrigins.includes(candidate),
    confirmSign: async (consent: SignConsent) => {
      const agreed = policy.autoConsent.some(
        (rule) =>
          rule.origins.includes(consent.origin) &&
          matches(rule, consent.token, consent.certificate.subject),
      );
      log(
        `${agreed ? 'consented' : 'declined'}: ${consent.origin} "${consent.documentTitle}" sha256 ${consent.documentDigestHex} with ${consent.certificate.subject} on ${consent.token.label}`,
      );
      return agreed;
    },
    askPin: async (question: PinQuestion) => {
      if (question.countLow || question.finalTry) {
        const message = `no PIN given to "${question.token.label}": it reports ${question.finalTry ? 'one try left' : 'few tries left'} after a wrong PIN; log in once by hand with the right PIN (e.g. pkcs11-tool --login --list-objects) to clear it, and check the policy's PIN`;
        log(message);
        throw new AgentFailure('PIN_TRIES_LOW', message, {
          countLow: question.countLow,
          finalTry: question.finalTry,
        });
      }
      const rule = policy.pins.find((entry) =>
        matches(entry, question.token, question.certificateSubject),
      );
      if (!rule) {
        const message = `the policy has no PIN for "${question.token.label}" (${question.certificateSubject})`;
        log(message);
        throw new AgentFailure('USER_CANCELLED', message);
      }
      return readPin(rule.pin, env);
    },
  };
}
