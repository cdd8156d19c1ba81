import fs from 'node:fs';
import path from 'node:path';

/**
 * The check behind "no credential in a log": reads every credential a test run was issued
 * (`<dir>/secrets/*.jsonl`, see runLog.ts) and every log line it wrote (`<dir>/logs/*.log`), and
 * answers where a credential shows in a log.
 *
 * A credential is looked for by its pieces of token alphabet ([A-Za-z0-9_-]):
 * - a long one (16 characters and more: link tokens, page credentials, keys, presigned
 *   signatures, the signature of a JWT) anywhere inside such a run of the log, so a token glued
 *   to other text is found too;
 * - a short one (a six-digit OTP, a short password piece) only as a whole run, and a run of
 *   digits only where it is not a JSON number (`"pid":123456` is no OTP), so that numbers the
 *   logs hold for other reasons do not count.
 */

export interface IssuedSecret {
  secret: string;
  source: string;
}

export interface Leak {
  file: string;
  line: number;
  source: string;
  /** The credential, shortened so that the report itself does not repeat it. */
  hint: string;
}

const tokenRun = /[A-Za-z0-9_-]+/g;
const windowLength = 16;

/** The pieces of a credential searched for; empty when it is too short to mean anything. */
export function needlesOf(secret: string): string[] {
  const parts = secret.match(tokenRun) ?? [];
  // A JWT's first part is the header, shared by every token of its kind: its other parts count.
  const pieces = secret.split('.').length === 3 && parts.length >= 3 ? parts.slice(1) : parts;
  const needles = new Set<string>();
  for (const piece of pieces) {
    if (piece.length >= windowLength) {
      needles.add(piece);
      // `esk_<id>_<random>`: the random part alone is as good as the key (it may hold `_` too).
      for (let at = piece.indexOf('_'); at !== -1; at = piece.indexOf('_', at + 1)) {
        if (piece.length - at - 1 >= 32) needles.add(piece.slice(at + 1));
      }
    } else if (piece.length >= 6) needles.add(piece);
  }
  return [...needles];
}

export function hintOf(secret: string): string {
  return secret.length <= 8
    ? `${secret.slice(0, 2)}… (${secret.length} characters)`
    : `${secret.slice(0, 4)}…${secret.slice(-2)} (${secret.length} characters)`;
}

export function readIssuedSecrets(dir: string): IssuedSecret[] {
  const folder = path.join(dir, 'secrets');
  if (!fs.existsSync(folder)) return [];
  const secrets: IssuedSecret[] = [];
  for (const name of fs.readdirSync(folder).sort()) {
    for (const line of fs.readFileSync(path.join(folder, name), 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      try {
        secrets.push(JSON.parse(line) as IssuedSecret);
      } catch {
        // A line cut by a worker that was killed mid-write: the others still count.
      }
    }
  }
  return secrets;
}

/** Every place a log line of `logFiles` holds one of `secrets`. */
export function findLeaks(secrets: IssuedSecret[], logFiles: string[]): Leak[] {
  const long = new Map<string, { needle: string; secret: IssuedSecret }[]>();
  const short = new Map<string, IssuedSecret>();
  for (const secret of secrets) {
    for (const needle of needlesOf(secret.secret)) {
      if (needle.length < windowLength) {
        short.set(needle, secret);
        continue;
      }
      const key = needle.slice(0, windowLength);
      const list = long.get(key) ?? [];
      list.push({ needle, secret });
      long.set(key, list);
    }
  }
  const leaks: Leak[] = [];
  for (const file of logFiles) {
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines.forEach((text, index) => {
      const seen = new Set<IssuedSecret>();
      const report = (secret: IssuedSecret) => {
        if (seen.has(secret)) return;
        seen.add(secret);
        leaks.push({ file, line: index + 1, source: secret.source, hint: hintOf(secret.secret) });
      };
      for (const match of text.matchAll(tokenRun)) {
        const run = match[0];
        const shortHit = short.get(run);
        if (shortHit && !(/^[0-9]+$/.test(run) && isJsonNumber(text, match.index))) {
          report(shortHit);
        }
        for (let at = 0; at + windowLength <= run.length; at++) {
          const candidates = long.get(run.slice(at, at + windowLength));
          if (!candidates) continue;
          for (const { needle, secret } of candidates) {
            if (run.startsWith(needle, at)) report(secret);
          }
        }
      }
    });
  }
  return leaks;
}

/** Whether the digits at `index` are a JSON number value (`"pid":123456`), not text. */
function isJsonNumber(text: string, index: number): boolean {
  return /[:,[]\s*$/.test(text.slice(Math.max(0, index - 2), index));
}

/** The log files of a run directory. */
export function runLogFiles(dir: string): string[] {
  const folder = path.join(dir, 'logs');
  if (!fs.existsSync(folder)) return [];
  return fs
    .readdirSync(folder)
    .sort()
    .map((name) => path.join(folder, name));
}

/** The whole check of a run directory: the leaks, and how much was looked at. */
export function scanRunLogs(dir: string): { leaks: Leak[]; secrets: number; files: number } {
  const secrets = readIssuedSecrets(dir);
  const files = runLogFiles(dir);
  return { leaks: findLeaks(secrets, files), secrets: secrets.length, files: files.length };
}
