import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { softHsmModule } from '../../../../test/support/tools';

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
