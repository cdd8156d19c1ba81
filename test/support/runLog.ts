import fs from 'node:fs';
import path from 'node:path';

/**
 * The test run's log directory: everything the servers of a jest run log, and every credential
 * the run was issued, so that the run's teardown (test/globalTeardown.ts) can prove that no log
 * line holds any of them. jest's globalSetup names the directory in ESIGN_TEST_LOG_DIR; the
 * workers inherit it. Outside jest (or with the variable unset) nothing is written.
 *
 *   <dir>/logs/<kind>-<worker>-<pid>.log      log lines, appended (one file per process and kind)
 *   <dir>/secrets/<worker>-<pid>.jsonl        {"secret","source"} per issued credential
 *
 * One file per process: jest's workers append in parallel without sharing a file.
 */

export const runLogDirVariable = 'ESIGN_TEST_LOG_DIR';

export function runLogDir(): string | undefined {
  const dir = process.env[runLogDirVariable];
  return dir === undefined || dir === '' ? undefined : dir;
}

function processTag(): string {
  return `${process.env.JEST_WORKER_ID ?? '0'}-${process.pid}`;
}

/** Appends `text` to this process's log file of `kind` (`server`, `child`, `cli`…). */
export function appendRunLog(kind: string, text: string): void {
  const dir = runLogDir();
  if (dir === undefined || text === '') return;
  const logs = path.join(dir, 'logs');
  fs.mkdirSync(logs, { recursive: true });
  fs.appendFileSync(path.join(logs, `${kind}-${processTag()}.log`), text);
}

/** A log destination (pino's `write`) that also appends every line to the run's log. */
export function runLogged(destination: { write(line: string): unknown }, kind = 'server') {
  return {
    write(line: string) {
      appendRunLog(kind, line);
      destination.write(line);
    },
  };
}

/** Notes a credential the run was issued (a token, key, OTP…), with where it came from. */
export function recordIssuedSecret(secret: string, source: string): void {
  const dir = runLogDir();
  if (dir === undefined || secret.length < 6) return;
  const secrets = path.join(dir, 'secrets');
  fs.mkdirSync(secrets, { recursive: true });
  fs.appendFileSync(
    path.join(secrets, `${processTag()}.jsonl`),
    `${JSON.stringify({ secret, source })}\n`,
  );
}

/** Names of JSON fields whose string value is a credential. */
const secretFields = new Set([
  'token',
  'accesstoken',
  'refreshtoken',
  'pagecredential',
  'ticket',
  'key',
  'apikey',
  'secret',
  'secretkey',
  'password',
  'otp',
]);
/** Query parameters that carry a credential in the URLs the service hands out. */
const secretParameters = new Set(['token', 'at', 'signature', 'sig', 'otp', 'code', 'ticket']);

/** The credentials inside the URLs of a text: signing page tokens, credential parameters. */
export function urlSecretsIn(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/\/ky-so\/(?:phien\/)?([A-Za-z0-9_-]{16,})/g)) {
    found.push(match[1]!);
  }
  for (const match of text.matchAll(/[?&#]([A-Za-z_-]+)=([^&#\s"'<>]+)/g)) {
    if (secretParameters.has(match[1]!.toLowerCase())) found.push(decodeURIComponent(match[2]!));
  }
  return found;
}

/** The six-digit codes of a text that sends one (an OTP SMS or e-mail). */
export function otpsIn(text: string): string[] {
  return [...text.matchAll(/(?<![0-9])([0-9]{6})(?![0-9])/g)].map((match) => match[1]!);
}

/** Every credential in a JSON value: secret fields, and URLs with credentials in any string. */
export function jsonSecretsIn(value: unknown): string[] {
  const found: string[] = [];
  const visit = (node: unknown, name: string | undefined): void => {
    if (typeof node === 'string') {
      if (name !== undefined && secretFields.has(name.toLowerCase())) found.push(node);
      else found.push(...urlSecretsIn(node));
    } else if (Array.isArray(node)) {
      for (const item of node) visit(item, name);
    } else if (node !== null && typeof node === 'object') {
      for (const [key, item] of Object.entries(node)) visit(item, key);
    }
  };
  visit(value, undefined);
  return found;
}

/**
 * Records the credentials of an HTTP answer's body or a command's output: JSON as a whole or
 * line by line (JSON lines, a walk's mixed output), and the credentials of URLs in other text.
 */
export function recordSecretsOfBody(body: string, source: string): void {
  if (runLogDir() === undefined) return;
  const secrets: string[] = [];
  const parsed = parseJson(body);
  if (parsed !== undefined) secrets.push(...jsonSecretsIn(parsed));
  else {
    for (const line of body.split('\n')) {
      const value = parseJson(line);
      secrets.push(...(value !== undefined ? jsonSecretsIn(value) : urlSecretsIn(line)));
    }
  }
  for (const secret of new Set(secrets)) recordIssuedSecret(secret, source);
}

function parseJson(text: string): unknown {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * An SMS or e-mail (decoded text) the run sent: its links' tokens, a new account's password and,
 * when it sends a code, the code.
 */
export function recordMessageSecrets(text: string, source: string): void {
  if (runLogDir() === undefined) return;
  const secrets = new Set(urlSecretsIn(text));
  for (const match of text.matchAll(/(?:mật khẩu|mat khau|password)\s*:\s*([^\s<]+)/gi)) {
    secrets.add(match[1]!);
  }
  if (/\bOTP\b|signing code/i.test(text)) for (const otp of otpsIn(text)) secrets.add(otp);
  for (const secret of secrets) recordIssuedSecret(secret, source);
}
