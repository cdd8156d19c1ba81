import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * A real PostgreSQL server for the tests: Debian's `postgresql` binaries (scripts/ensure-test-
 * deps.sh installs them), a cluster made by `initdb` in a temporary folder and started by
 * `pg_ctl` on a loopback port. PostgreSQL refuses to run as root, so as root the cluster belongs
 * to the `postgres` user the package creates. Durability is off (a test cluster is thrown away).
 *
 * The jest run starts one cluster (test/globalSetup.ts) and names it in ESIGN_TEST_PG_URL; each
 * test takes a fresh database on it with `testDatabaseUrl()`.
 */

export const postgresUrlVariable = 'ESIGN_TEST_PG_URL';
/** `postgres` when the jest project runs every test on PostgreSQL (see jest.config.js). */
export const dialectVariable = 'ESIGN_TEST_DIALECT';

declare global {
  /** The run's cluster, from jest's global setup to its teardown (same process). */
  var esignPostgresCluster: PostgresCluster | undefined;
}

export interface PostgresCluster {
  /** `postgres://esign@127.0.0.1:PORT` without a database name. */
  baseUrl: string;
  dir: string;
  stop(): void;
}

/** The folder of Debian's PostgreSQL server programs, newest version first; undefined if none. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const versions = fs
    .readdirSync(root)
    .filter((name) => fs.existsSync(path.join(root, name, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? path.join(root, versions[0]!, 'bin') : undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Runs a PostgreSQL program, as the `postgres` user when this process is root. */
function runAsOwner(program: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const [command, commandArgs] = asRoot
    ? ['runuser', ['-u', 'postgres', '--', program, ...args]]
    : [program, args];
  const result = spawnSync(command, commandArgs, { encoding: 'utf8' });
  if (result.status !== 0) {
    throw new Error(
      `${path.basename(program)} failed (${result.status}): ${result.stderr || result.stdout}`,
    );
  }
}

export async function startPostgresCluster(): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  if (bin === undefined) {
    throw new Error(
      'PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): run scripts/ensure-test-deps.sh',
    );
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-pg-'));
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres:', dir]);
  const data = path.join(dir, 'data');
  runAsOwner(path.join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'esign',
    '-A',
    'trust',
    '-E',
    'UTF8',
    '--locale=C.UTF-8',
    '--no-sync',
  ]);
  const port = await freePort();
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    "-c listen_addresses='127.0.0.1'",
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    '-c max_connections=400',
    '-c shared_buffers=64MB',
  ].join(' ');
  runAsOwner(path.join(bin, 'pg_ctl'), [
    '-D',
    data,
    '-o',
    options,
    '-l',
    path.join(dir, 'server.log'),
    '-w',
    'start',
  ]);
  return {
    baseUrl: `postgres://esign@127.0.0.1:${port}`,
    dir,
    stop() {
      try {
        runAsOwner(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

let created = 0;

/**
 * A new, empty database on the run's cluster, as a URL for DATABASE_URL; undefined when the
 * tests run on SQLite. Never reused: a test owns what it writes. Synchronous (psql), so that
 * set-ups stay synchronous.
 */
export function testDatabaseUrl(): string | undefined {
  if (process.env[dialectVariable] !== 'postgres') return undefined;
  const base = process.env[postgresUrlVariable];
  if (!base) throw new Error(`${postgresUrlVariable} is not set: test/globalSetup.ts starts it`);
  created += 1;
  const name = `t_${process.pid}_${created}_${Math.random().toString(36).slice(2, 8)}`;
  execFileSync('psql', [`${base}/postgres`, '-qXc', `CREATE DATABASE ${name}`]);
  return `${base}/${name}`;
}

const byDataDir = new Map<string, { DATABASE_URL: string; SECRET_KEY: string }>();

/**
 * `{ DATABASE_URL, SECRET_KEY }` when the tests run on PostgreSQL, else nothing: one database
 * per DATA_DIR, so that a server started again on the same folder finds its data, as it does on
 * SQLite; and the master secret every instance on PostgreSQL must be given (a test's own
 * SECRET_KEY, spread after this, wins).
 */
export function databaseEnv(dataDir: string | undefined): {
  DATABASE_URL?: string;
  SECRET_KEY?: string;
} {
  if (process.env[dialectVariable] !== 'postgres') return {};
  const key = dataDir === undefined ? undefined : path.resolve(dataDir);
  let env = key === undefined ? undefined : byDataDir.get(key);
  if (env === undefined) {
    env = {
      DATABASE_URL: testDatabaseUrl()!,
      SECRET_KEY: crypto.randomBytes(32).toString('base64'),
    };
    if (key !== undefined) byDataDir.set(key, env);
  }
  return env;
}
