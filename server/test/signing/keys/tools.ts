import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

export const softHsmModule = '/usr/lib/softhsm/libsofthsm2.so';

/** A fresh temp directory, removed by the returned function. */
export function tempDir(prefix: string): { dir: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** Runs a tool: its exit status and stdout then stderr (openssl writes verdicts to either). */
export function attempt(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): { status: number; output: string } {
  const result = spawnSync(command, args, { env: { ...process.env, ...env }, encoding: 'utf8' });
  if (result.error) throw result.error;
  return { status: result.status ?? -1, output: `${result.stdout}${result.stderr}` };
}

/** Runs a tool that must succeed; returns its output. */
export function run(command: string, args: string[], env: NodeJS.ProcessEnv = {}): string {
  const { status, output } = attempt(command, args, env);
  if (status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${status}:\n${output}`);
  return output;
}

/**
 * A SoftHSM2 configuration with its own token directory and one initialized token. Set
 * SOFTHSM2_CONF to `config` before the module is first loaded in the process.
 */
export function provisionSoftHsm(
  dir: string,
  tokens: { label: string; pin: string; soPin: string }[],
): { config: string } {
  const tokenDir = path.join(dir, 'tokens');
  fs.mkdirSync(tokenDir, { recursive: true });
  const config = path.join(dir, 'softhsm2.conf');
  fs.writeFileSync(
    config,
    `directories.tokendir = ${tokenDir}\nobjectstore.backend = file\nlog.level = ERROR\n`,
  );
  for (const token of tokens) {
    const args = ['--init-token', '--free', '--label', token.label];
    run('softhsm2-util', [...args, '--so-pin', token.soPin, '--pin', token.pin], {
      SOFTHSM2_CONF: config,
    });
  }
  return { config };
}

/** `openssl dgst -sha256 -verify` of a signature over `data` with a DER SPKI. */
export function opensslVerifies(
  dir: string,
  spki: Buffer,
  data: Buffer,
  signature: Buffer,
): { status: number; output: string } {
  const name = crypto.randomBytes(6).toString('hex');
  const file = (suffix: string) => path.join(dir, `${name}.${suffix}`);
  const pem = crypto.createPublicKey({ key: spki, format: 'der', type: 'spki' });
  fs.writeFileSync(file('pub.pem'), pem.export({ format: 'pem', type: 'spki' }));
  fs.writeFileSync(file('data'), data);
  fs.writeFileSync(file('sig'), signature);
  return attempt('openssl', [
    'dgst',
    '-sha256',
    '-verify',
    file('pub.pem'),
    '-signature',
    file('sig'),
    file('data'),
  ]);
}

export function derToPem(der: Buffer, label = 'CERTIFICATE'): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return [`-----BEGIN ${label}-----`, ...lines, `-----END ${label}-----`, ''].join('\n');
}

/** The token client of tokenClientProcess.ts, running in its own process. */
export interface TokenClient {
  generate(
    label: string,
    algorithm: 'rsa-2048' | 'ec-p256',
    commonName: string,
  ): Promise<{ spki: Buffer; csr: string }>;
  /** RSA PKCS#1 v1.5 (CKM_SHA256_RSA_PKCS), or ECDSA raw r||s (CKM_ECDSA over SHA-256). */
  sign(label: string, data: Uint8Array): Promise<Buffer>;
  close(): Promise<void>;
}

/**
 * Starts tokenClientProcess.ts with SOFTHSM2_CONF = `config` (from provisionSoftHsm) on the
 * token `tokenLabel`: one process for every request of a test file.
 */
export function startTokenClient(
  config: string,
  token: { label: string; pin: string },
  cwd: string,
): TokenClient {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(__dirname, 'tokenClientProcess.ts'),
      JSON.stringify({ module: softHsmModule, tokenLabel: token.label, pin: token.pin }),
    ],
    { cwd, env: { ...process.env, SOFTHSM2_CONF: config }, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const waiting: ((line: string) => void)[] = [];
  readline.createInterface({ input: child.stdout }).on('line', (line) => waiting.shift()?.(line));
  const exited = new Promise<void>((resolve) =>
    child.on('exit', (code) => {
      for (const answer of waiting.splice(0)) {
        answer(JSON.stringify({ ok: false, error: `the process exited (${code})` }));
      }
      resolve();
    }),
  );
  // Requests are answered in order, one line each.
  const ask = (request: Record<string, string>) =>
    new Promise<Record<string, string>>((resolve, reject) => {
      waiting.push((line) => {
        const reply = JSON.parse(line) as { ok: boolean; error?: string } & Record<string, string>;
        if (reply.ok) resolve(reply);
        else reject(new Error(`token client: ${reply.error}`));
      });
      child.stdin.write(`${JSON.stringify(request)}\n`);
    });
  return {
    generate: async (label, algorithm, commonName) => {
      const reply = await ask({ op: 'generate', label, algorithm, commonName });
      return { spki: Buffer.from(reply.spki!, 'base64'), csr: reply.csr! };
    },
    sign: async (label, data) => {
      const reply = await ask({ op: 'sign', label, data: Buffer.from(data).toString('base64') });
      return Buffer.from(reply.signature!, 'base64');
    },
    close: async () => {
      child.stdin.end();
      await exited;
    },
  };
}
