import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../server/src/platform/clock';
import { loadConfig } from '../../server/src/platform/config';
import { createLogger } from '../../server/src/platform/logger';
import { openRuntime } from '../../server/src/runtime';
import { postgresBinDir, startPostgresCluster } from '../../test/support/postgres';
import { compareSides, type RunningServer, startProductServer } from './http';
import { deadlinesAfterToday } from './httpApi';
import { iso, random, type Seeded, seed, start } from './seed';
import { compareSigningOnPostgres, type DatabaseEnv } from './signing';

/**
 * PostgreSQL and several instances (issue 19), in the same run as the rest of `npm run bench`:
 * - the dossier lookup over HTTP (`GET /api/integration/documents/{documentId}`, a random dossier
 *   per request, 32 connections, autocannon from this process: scripts/bench/http.ts) on SQLite
 *   and on PostgreSQL, the same seed (scripts/bench/seed.ts) of BENCH_PG_DOSSIERS dossiers
 *   (20,000) on both, the built server as `npm start` runs it;
 * - the same lookup on two built servers on that one PostgreSQL database, 16 connections each,
 *   next to one server with all 32;
 * - a signing round (scripts/bench/signing.ts: prepare + finalize with the seal in a warm child)
 *   with the service on SQLite and on PostgreSQL, a one-page PDF and one of BENCH_PG_SIGNING_MB
 *   MB (5).
 * PostgreSQL is the test suite's: a cluster made by initdb in a temporary folder on a loopback
 * port (test/support/postgres.ts; fsync off, as for the tests), a database made from template0 in
 * UTF-8 with the C.UTF-8 locale, stopped and removed at the end. Its processes' CPU time is
 * printed per request beside the server's. Skipped, with one line, when PostgreSQL is not
 * installed or BENCH_PG=0. No target is set for these: figures and ratios only.
 */

const dossiers = Number(process.env.BENCH_PG_DOSSIERS || 20_000);
const signingMegabytes = Number(process.env.BENCH_PG_SIGNING_MB || 5);
const connections = 32;
const title = 'PostgreSQL and several instances';

/** CPU milliseconds so far of a PostgreSQL cluster: the postmaster, its children, those gone. */
function clusterCpuMs(dataDir: string): () => number {
  const postmaster = Number(
    fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0],
  );
  // Fields after "pid (comm) ": ppid at 1, utime 11, stime 12, cutime 13, cstime 14 (clock ticks).
  const stat = (pid: string | number): string[] | undefined => {
    try {
      return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    } catch {
      return undefined; // gone meanwhile: its time is in the postmaster's cutime now
    }
  };
  const ticks = (fields: string[], from: number, to: number) =>
    fields.slice(from, to + 1).reduce((sum, field) => sum + Number(field), 0);
  return () => {
    const own = stat(postmaster);
    if (!own) throw new Error('the bench PostgreSQL cluster stopped');
    let total = ticks(own, 11, 14);
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const fields = stat(entry);
      if (fields && Number(fields[1]) === postmaster) total += ticks(fields, 11, 12);
    }
    return (total * 1000) / 100;
  };
}

/** A database on the cluster as `createdb -T template0 -E UTF8 --locale=C.UTF-8` makes it. */
function createDatabase(baseUrl: string, name: string): DatabaseEnv {
  execFileSync('psql', [
    `${baseUrl}/postgres`,
    '-qXc',
    `CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C.UTF-8'`,
  ]);
  return {
    DATABASE_URL: `${baseUrl}/${name}`,
    SECRET_KEY: crypto.randomBytes(32).toString('base64'),
  };
}

const unlimited = {
  APP_ENV: 'development',
  RATE_LIMIT_AUTH: '100000000',
  RATE_LIMIT_API: '100000000',
  RATE_LIMIT_UPLOAD: '100000000',
};

/** Seeds `dataDir` (and the database `database` names, if any) through the server's code. */
async function seedInto(dataDir: string, database: DatabaseEnv): Promise<Seeded> {
  const clock = new ManualClock(iso(start));
  const config = loadConfig({
    DATA_DIR: dataDir,
    PUBLIC_URL: 'http://127.0.0.1:3000',
    ...unlimited,
    ...database,
  });
  const runtime = openRuntime(config, { logger: createLogger('silent'), clock });
  try {
    await runtime.database.ready();
    const seeded = await seed(runtime, clock, { dossiers, tasks: 0 });
    await deadlinesAfterToday(runtime.deps.db);
    return seeded;
  } finally {
    await runtime.database.close();
  }
}

export async function benchScaleOut(): Promise<void> {
  if (process.env.BENCH_PG === '0') {
    process.stdout.write(`${title}: skipped (BENCH_PG=0).\n`);
    return;
  }
  if (postgresBinDir() === undefined) {
    process.stdout.write(
      `${title}: skipped: PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb; scripts/ensure-test-deps.sh installs it).\n`,
    );
    return;
  }
  const cluster = await startPostgresCluster();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-bench-scale-'));
  const servers: RunningServer[] = [];
  try {
    const postgres = createDatabase(cluster.baseUrl, 'bench');
    const dirs = ['sqlite', 'postgres-1', 'postgres-2'].map((name) => path.join(scratch, name));
    const onSqlite = await seedInto(dirs[0]!, {});
    const onPostgres = await seedInto(dirs[1]!, postgres);
    const { counts } = onSqlite;
    process.stdout.write(
      `${title}: ${counts.dossiers} dossiers (${counts.tasks} tasks, ${counts.turns} turns) seeded on each side: SQLite in ${onSqlite.seconds.toFixed(1)} s, PostgreSQL ${postgresBinDir()!.split('/').at(-2)} (local cluster, fsync off) in ${onPostgres.seconds.toFixed(1)} s.\n`,
    );

    servers.push(await startProductServer({ DATA_DIR: dirs[0]!, ...unlimited }));
    // Two instances: their own DATA_DIR each, one database and one SECRET_KEY.
    for (const dir of dirs.slice(1)) {
      servers.push(await startProductServer({ DATA_DIR: dir, ...unlimited, ...postgres }));
    }
    const [sqliteServer, first, second] = servers as [RunningServer, RunningServer, RunningServer];
    // The same seed gives the same document ids on both sides; the API keys differ.
    const pick = random(13);
    const documentIds = onSqlite.documentIds;
    const backendCpuMs = clusterCpuMs(path.join(cluster.dir, 'data'));
    const key = (seeded: Seeded) => ({ 'X-API-Key': seeded.adminKey });
    await compareSides(
      'Lookup GET /documents/{documentId}, SQLite vs PostgreSQL, one vs two instances',
      {
        name: 'lookup',
        connections,
        path: () =>
          `/api/integration/documents/${documentIds[Math.floor(pick() * documentIds.length)]!}`,
      },
      [
        { name: 'SQLite, one instance', servers: [sqliteServer], headers: key(onSqlite) },
        {
          name: 'PostgreSQL, one instance',
          servers: [first],
          backendCpuMs,
          versus: 'SQLite, one instance',
          headers: key(onPostgres),
        },
        {
          name: 'PostgreSQL, two instances',
          servers: [first, second],
          backendCpuMs,
          versus: 'PostgreSQL, one instance',
          headers: key(onPostgres),
        },
      ],
    );
    process.stdout.write(
      `(ratio: requests per second over the named side's. Two instances share ${os.cpus().length} CPUs with PostgreSQL and the load generator: little gain is expected here.)\n\n`,
    );
    for (const server of servers.splice(0)) await server.stop();

    await compareSigningOnPostgres(createDatabase(cluster.baseUrl, 'signing'), signingMegabytes);
  } finally {
    for (const server of servers) await server.stop();
    cluster.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

if (require.main === module) {
  benchScaleOut().catch((error: unknown) => {
    process.stderr.write(
      `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}
