import { spawn } from 'node:child_process';
import path from 'node:path';
import { databaseEnv } from '../../../test/support/postgres';
import { appendRunLog, recordSecretsOfBody } from '../../../test/support/runLog';

/** The repository root: the CLI runs from there, as `npm run -s admin` does. */
export const repoRoot = path.resolve(__dirname, '../../..');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON; fails the test unless stdout is exactly one JSON object. */
  json<T = Record<string, unknown>>(): T;
}

/**
 * Splits a command line as a shell would for the simple cases the tests use: words separated by
 * spaces, double quotes around any part of a word that holds spaces (`--member DEMO:"Quản trị"`).
 */
export function words(command: string): string[] {
  return (command.match(/(?:"[^"]*"|[^\s"])+/g) ?? []).map((word) => word.replaceAll('"', ''));
}

/**
 * Runs the real CLI as a child process (`node --import tsx server/src/admin/cli.ts …`) on
 * `dataDir`, with only the environment it needs, so nothing of the test process leaks in.
 */
export function runCli(
  dataDir: string,
  command: string | string[],
  options: { input?: string; env?: Record<string, string> } = {},
): Promise<CliResult> {
  const args = typeof command === 'string' ? words(command) : command;
  // On PostgreSQL, the database (and master secret) of the harness on this DATA_DIR.
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    APP_ENV: 'development',
    ...databaseEnv(dataDir),
  };
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'NODE_EXTRA_CA_CERTS']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/src/admin/cli.ts', ...args], {
    cwd: repoRoot,
    env: { ...env, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  child.stdin.end(options.input ?? '');
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      // stderr is the CLI's log; stdout its answer, whose keys and secrets the run notes.
      appendRunLog('cli', stderr);
      recordSecretsOfBody(stdout, `admin ${args[0] ?? ''} ${args[1] ?? ''}`);
      resolve({
        code,
        stdout,
        stderr,
        json<T>() {
          const lines = stdout.split('\n').filter((line) => line !== '');
          if (lines.length !== 1)
            throw new Error(`expected one JSON line on stdout, got:\n${stdout}`);
          const value = JSON.parse(lines[0]!) as unknown;
          if (typeof value !== 'object' || value === null || Array.isArray(value)) {
            throw new Error(`stdout is not a JSON object: ${stdout}`);
          }
          return value as T;
        },
      });
    });
  });
}
