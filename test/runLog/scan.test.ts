import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import globalTeardown from '../globalTeardown';
import { jsonSecretsIn, otpsIn, runLogDirVariable, urlSecretsIn } from '../support/runLog';
import { findLeaks, needlesOf, scanRunLogs } from '../support/runLogScan';

/**
 * The run's check that no log holds an issued credential: the scanning function on logs written
 * here, and the teardown itself, which must fail the run on a leak.
 */

const token = () => crypto.randomBytes(32).toString('base64url');
let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-scan-'));
  fs.mkdirSync(path.join(dir, 'logs'));
  fs.mkdirSync(path.join(dir, 'secrets'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function writeLog(name: string, lines: unknown[]): string {
  const file = path.join(dir, 'logs', name);
  fs.writeFileSync(file, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
  return file;
}

function issue(...secrets: string[]): void {
  fs.appendFileSync(
    path.join(dir, 'secrets', '1-1.jsonl'),
    secrets.map((secret) => `${JSON.stringify({ secret, source: 'test' })}\n`).join(''),
  );
}

describe('findLeaks', () => {
  it('finds a token as a path segment, a query value, glued to other text, and an OTP as text', () => {
    const [a, b, c, d] = [token(), token(), token(), token()];
    const file = writeLog('server-1-1.log', [
      { msg: 'request', path: `/app/ky-so/phien/${a}` },
      { msg: 'request', path: `/api/files/x?signature=${b}` },
      { msg: 'x', note: `prefix${c}suffix` },
      { msg: 'clean', path: '/app/ky-so/phien/[redacted]', other: d.slice(0, 20) },
      { msg: 'otp', body: { otp: '482913' } },
    ]);
    const leaks = findLeaks(
      [a, b, c, d, '482913'].map((secret, index) => ({ secret, source: `s${index}` })),
      [file],
    );
    expect(leaks.map((leak) => [leak.line, leak.source])).toEqual([
      [1, 's0'],
      [2, 's1'],
      [3, 's2'],
      [5, 's4'],
    ]);
    // The report never repeats the credential.
    expect(JSON.stringify(leaks)).not.toContain(a);
  });

  it('an OTP equal to a JSON number (a pid, a duration) or inside a longer number is no leak', () => {
    const file = writeLog('server-1-1.log', [
      { pid: 482913, ms: 1, time: 17954829130000 },
      { requestId: 'a482913b-0000' },
    ]);
    expect(findLeaks([{ secret: '482913', source: 'sms' }], [file])).toEqual([]);
  });

  it('a JWT is looked for by its payload and signature, not by the header every token shares', () => {
    const jwt = `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.${token()}.${token()}`;
    const [header, ...rest] = jwt.split('.');
    expect(needlesOf(jwt)).toEqual(expect.arrayContaining(rest));
    expect(needlesOf(jwt)).not.toContain(header);
    const file = writeLog('server-1-1.log', [{ note: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9' }]);
    expect(findLeaks([{ secret: jwt, source: 'login' }], [file])).toEqual([]);
  });

  it('an API key is found whole or by its random part alone', () => {
    const random = token();
    const key = `esk_0123456789abcdef_${random}`;
    const file = writeLog('server-1-1.log', [{ note: `secret=${random}` }]);
    expect(findLeaks([{ secret: key, source: 'key' }], [file])).toHaveLength(1);
  });
});

describe('what the test support notes as issued', () => {
  it('secret fields and credential URLs of JSON answers; codes and links of messages', () => {
    const [link, page, signature] = [token(), token(), 'ab'.repeat(32)];
    expect(
      jsonSecretsIn({
        data: {
          sessionId: 'not-a-credential',
          signingUrl: `https://app.example/ky-so/phien/${link}`,
          pageCredential: page,
          files: [{ url: `http://h/api/files/u?expires=1&signature=${signature}` }],
        },
      }).sort(),
    ).toEqual([link, page, signature].sort());
    expect(urlSecretsIn(`Ký tại: https://app.example/ky-so/${link}`)).toEqual([link]);
    expect(otpsIn('Ma OTP cua ban la 048213, co hieu luc trong 5 phut')).toEqual(['048213']);
  });
});

describe('the teardown', () => {
  /** Runs the teardown on `dir` as jest would at the end of a run. */
  function teardownOn(run: string): void {
    const saved = process.env[runLogDirVariable];
    const owned = process.env.ESIGN_TEST_LOG_DIR_OWNED;
    process.env[runLogDirVariable] = run;
    delete process.env.ESIGN_TEST_LOG_DIR_OWNED;
    try {
      globalTeardown();
    } finally {
      if (saved === undefined) delete process.env[runLogDirVariable];
      else process.env[runLogDirVariable] = saved;
      if (owned !== undefined) process.env.ESIGN_TEST_LOG_DIR_OWNED = owned;
    }
  }

  it('throws, naming the log file and line and a shortened hint, when a log holds a credential', () => {
    const leaked = token();
    issue(leaked, token());
    writeLog('server-1-1.log', [{ msg: 'ok' }, { msg: 'request', path: `/app/ky-so/${leaked}` }]);
    let message = '';
    try {
      teardownOn(dir);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain(`${path.join(dir, 'logs', 'server-1-1.log')}:2:`);
    expect(message).toContain(`${leaked.slice(0, 4)}…`);
    expect(message).not.toContain(leaked);
    expect(fs.existsSync(dir)).toBe(true);
  });

  it('passes when every log is clean', () => {
    issue(token(), '482913');
    writeLog('server-1-1.log', [{ msg: 'request', path: '/app/ky-so/[redacted]', pid: 482913 }]);
    expect(() => teardownOn(dir)).not.toThrow();
    expect(scanRunLogs(dir)).toEqual({ leaks: [], secrets: 2, files: 1 });
  });
});
