/**
 * The command-line tools the tests drive for real (openssl, softhsm2-util), temp folders, and
 * the SoftHSM2 module: shared by the server's and the agent's tests.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const softHsmModule = '/usr/lib/softhsm/libsofthsm2.so';

/**
 * An agent settings file in `dir` for SoftHSM2, on a random port (each test its own); with
 * `tsaUrl`, the timestamp authority the agent asks. Returns its path.
 */
export function writeAgentSettings(dir: string, tsaUrl?: string): string {
  const file = path.join(dir, 'settings.json');
  const settings = {
    port: 20000 + crypto.randomInt(20000),
    pkcs11Modules: [{ label: 'SoftHSM2', path: softHsmModule }],
    ...(tsaUrl === undefined ? {} : { tsaUrl }),
  };
  fs.writeFileSync(file, JSON.stringify(settings));
  return file;
}

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
