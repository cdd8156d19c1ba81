import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { databaseEnv } from '../../../test/support/postgres';
import { appendRunLog } from '../../../test/support/runLog';
import { recordOutboxSecrets } from '../support/issuedSecrets';

/** The repository root: the built server runs from there, as `npm start` does. */
export const repoRoot = path.resolve(__dirname, '../../..');

/** Builds server/dist when it is missing or stale, exactly as `npm start` does first. */
export function ensureBuilt(): void {
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], {
    cwd: repoRoot,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

export function tempDataDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'esign-startup-'));
}

/** A port nobody listens on right now (the server's config needs a number up front). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

export interface BuiltServer {
  port: number;
  /** The server's process id (its memory is in /proc/<pid>/status). */
  pid: number;
  /** Everything the process printed on stdout so far. */
  stdout(): string;
  /** SIGTERM, then waits for the exit; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `node server/dist/main.js` on 127.0.0.1 with only the environment given (plus PATH and
 * HOME), and resolves once it logged `listening`.
 */
export async function startBuiltServer(env: Record<string, string>): Promise<BuiltServer> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    ['--enable-source-maps', 'server/dist/main.js'],
    {
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        HOST: '127.0.0.1',
        PORT: String(port),
        // The PostgreSQL project: a database per DATA_DIR (test/support/postgres.ts).
        ...databaseEnv(env.DATA_DIR),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  // Its log (stdout) and whatever else it prints go to the jest run's log, checked for secrets.
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    appendRunLog('built-server', chunk);
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    appendRunLog('built-server', chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no "listening" in 20 s:\n${stdout}\n${stderr}`)),
      20_000,
    );
    const check = () => {
      if (!stdout.includes('"msg":"listening"')) return;
      clearTimeout(timer);
      resolve();
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code}) before listening:\n${stdout}\n${stderr}`));
    });
  });
  return {
    port,
    pid: child.pid!,
    stdout: () => stdout,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * The jest hooks of a suite that starts the built server: builds once, stops whatever a test
 * left running, removes the data directories it made.
 */
export function builtServerSuite(): {
  newDataDir(): string;
  start(env: Record<string, string>): Promise<BuiltServer>;
} {
  const dataDirs: string[] = [];
  const running: BuiltServer[] = [];
  beforeAll(() => ensureBuilt(), 120_000);
  afterEach(async () => {
    await Promise.all(running.splice(0).map((server) => server.stop()));
  });
  afterAll(() => {
    for (const dir of dataDirs) {
      recordOutboxSecrets(dir, 'built server outbox');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
  return {
    newDataDir: () => {
      const dir = tempDataDir();
      dataDirs.push(dir);
      return dir;
    },
    start: async (env) => {
      const server = await startBuiltServer(env);
      running.push(server);
      return server;
    },
  };
}

/**
 * The rows a query reads from the database of the server on `dataDir`, synchronously: its SQLite
 * file, or (postgres project) its PostgreSQL database through psql, rows as JSON.
 */
export function rowsOfDataDir<T>(dataDir: string, query: string): T[] {
  const url = databaseEnv(dataDir).DATABASE_URL;
  if (url === undefined) {
    const sqlite = new BetterSqlite3(path.join(dataDir, 'esign.sqlite'), { readonly: true });
    try {
      return sqlite.prepare(query).all() as T[];
    } finally {
      sqlite.close();
    }
  }
  const json = execFileSync(
    'psql',
    [url, '-XAtq', '-c', `SELECT coalesce(json_agg(t), '[]') FROM (${query}) t`],
    { encoding: 'utf8' },
  );
  return JSON.parse(json) as T[];
}
