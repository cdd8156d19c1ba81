/**
 * `npm run bench`: latency of the dossier lookup and of the task list at 100k dossiers, then the
 * webhook bench (scripts/bench/webhooks.ts), the download bench (scripts/bench/download.ts), the signing bench (scripts/bench/signing.ts), the agent
 * round-trip bench (scripts/bench/agent.ts), PostgreSQL and several instances
 * (scripts/bench/scaleOut.ts; skipped without PostgreSQL) and the start-up bench (scripts/bench/startup.ts).
 *
 * Creates a temporary DATA_DIR, seeds one tenant with 20 organizations, 2,000 staff, 20,000
 * outside signers and 100,000 dossiers of a three-step process (guest, 1–2 internal turns,
 * role-based) in realistic end states (scripts/bench/seed.ts), then times requests through `app.request` (the whole
 * app: authentication, rate limit, permission, validation, SQL, JSON) and prints p50/p95/p99,
 * the web application's dossier list (50 rows), task list and dashboard among them.
 * Prints figures only; asserts nothing. BENCH_DOSSIERS and BENCH_REQUESTS change the sizes;
 * BENCH_TASKS seeds dossiers until that many tasks exist instead (1,000,000: about 450,000
 * dossiers). BENCH_KEEP_DIR keeps the seeded DATA_DIR there and reuses it on the next run.
 * Then the same database over HTTP (scripts/bench/httpApi.ts; BENCH_HTTP=0 skips it,
 * BENCH_IN_PROCESS=0 skips the in-process table).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../server/src/app';
import { dossierByDocumentId, scopeOf } from '../server/src/dossiers/scope';
import { ManualClock } from '../server/src/platform/clock';
import { loadConfig } from '../server/src/platform/config';
import { createLogger } from '../server/src/platform/logger';
import { openRuntime } from '../server/src/runtime';
import { openWebSession } from '../server/src/web/session/service';
import { benchAgent } from './bench/agent';
import { benchDownload } from './bench/download';
import { benchHttp } from './bench/httpApi';
import { benchScaleOut } from './bench/scaleOut';
import { guestCount, iso, random, type Seeded, seed, staffCount, start } from './bench/seed';
import { benchSigning } from './bench/signing';
import { benchStartup } from './bench/startup';
import { benchWebhooks } from './bench/webhooks';

const taskTarget = Number(process.env.BENCH_TASKS ?? 0);
const dossierCount = taskTarget > 0 ? Infinity : Number(process.env.BENCH_DOSSIERS ?? 100_000);
const keepDir = process.env.BENCH_KEEP_DIR;
const requestCount = Number(process.env.BENCH_REQUESTS ?? 300);

async function main(): Promise<void> {
  const dataDir = keepDir
    ? path.resolve(keepDir)
    : fs.mkdtempSync(path.join(os.tmpdir(), 'esign-bench-'));
  const kept = path.join(dataDir, 'bench-seeded.json');
  const clock = new ManualClock(iso(start));
  const config = loadConfig({
    DATA_DIR: dataDir,
    APP_ENV: 'development',
    PUBLIC_URL: 'http://127.0.0.1:3000',
    RATE_LIMIT_AUTH: '100000000',
    RATE_LIMIT_API: '100000000',
    RATE_LIMIT_UPLOAD: '100000000',
  });
  const runtime = openRuntime(config, { logger: createLogger('silent'), clock });
  try {
    const seeded: Seeded = fs.existsSync(kept)
      ? (JSON.parse(fs.readFileSync(kept, 'utf8')) as Seeded)
      : await seed(runtime, clock, { dossiers: dossierCount, tasks: taskTarget });
    if (keepDir) fs.writeFileSync(kept, JSON.stringify(seeded));
    clock.set(iso(start + (seeded.counts.dossiers! * 20_000 + 30 * 24 * 3600_000)));
    if (process.env.BENCH_IN_PROCESS !== '0') await report(runtime, seeded);
    if (process.env.BENCH_HTTP !== '0') {
      process.stdout.write('\n');
      await benchHttp(runtime.deps.db, dataDir, seeded);
    }
  } finally {
    await runtime.database.close();
    if (!keepDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

async function report(runtime: ReturnType<typeof openRuntime>, seeded: Seeded): Promise<void> {
  const app = buildApp(runtime.deps);
  const pick = random(7);
  const get = (key: string, url: string) => app.request(url, { headers: { 'X-API-Key': key } });
  const rows: string[][] = [];

  async function measure(name: string, call: () => Promise<number | string>): Promise<void> {
    for (let warm = 0; warm < 10; warm += 1) await call();
    const times: number[] = [];
    let note: number | string = '';
    for (let run = 0; run < requestCount; run += 1) {
      const began = performance.now();
      note = await call();
      times.push(performance.now() - began);
    }
    times.sort((a, b) => a - b);
    rows.push([
      name,
      ...[0.5, 0.95, 0.99].map((fraction) => `${percentile(times, fraction).toFixed(2)} ms`),
      String(note),
    ]);
  }

  const randomDocument = () => seeded.documentIds[Math.floor(pick() * seeded.documentIds.length)]!;
  const probe = await get(seeded.adminKey, `/api/integration/documents/${randomDocument()}`);
  if (probe.status === 200) {
    await measure('lookup GET /documents/{documentId}', async () => {
      const response = await get(seeded.adminKey, `/api/integration/documents/${randomDocument()}`);
      await response.arrayBuffer();
      return `HTTP ${response.status}`;
    });
  } else {
    rows.push([
      `(endpoint 3 answered HTTP ${probe.status}; timing the query-level lookup instead)`,
      '',
      '',
      '',
      '',
    ]);
    const principal = {
      kind: 'partnerToken' as const,
      actor: { id: 1, tenantId: 1, username: 'admin.bench', isSuperAdmin: false },
    };
    const scope = await scopeOf(runtime.deps.db, principal);
    await measure('lookup dossierByDocumentId (query)', async () => {
      const dossier = await dossierByDocumentId(runtime.deps.db, scope, randomDocument());
      return dossier.status;
    });
  }

  const list = (key: string, query: string) => async () => {
    const response = await get(key, `/api/integration/tasks?${query}`);
    const body = (await response.json()) as { data?: { total: number } };
    return response.status === 200 ? `total ${body.data!.total}` : `HTTP ${response.status}`;
  };
  await measure('tasks pending, page 1 (typical user)', list(seeded.typicalKey, 'status=pending'));
  await measure('tasks all, page 1 (typical user)', list(seeded.typicalKey, 'status=all'));
  await measure('tasks pending, page 1 (heavy user)', list(seeded.heavyKey, 'status=pending'));
  await measure('tasks all, page 1 (heavy user)', list(seeded.heavyKey, 'status=all'));
  await measure(
    'tasks all, page 200 (heavy user, deep)',
    list(seeded.heavyKey, 'status=all&page=200'),
  );
  await measure(
    'tasks completed, page 1, keyword (heavy)',
    list(seeded.heavyKey, 'status=completed&keyword=kh%C3%A1ch%20h%C3%A0ng%2012'),
  );
  await measure(
    'tasks all, one week (heavy user)',
    list(seeded.heavyKey, 'fromDate=2026-10-08&toDate=2026-10-14'),
  );

  // The web app's pages as a signed-in administrator sees them: the time until the page's
  // response is ready (its first byte; the page is rendered whole), 50 rows a page.
  const session = await openWebSession(runtime.deps, {
    userId: seeded.adminUserId,
    credential: 'password',
  });
  const page = (url: string) => async () => {
    const response = await app.request(url, {
      headers: { cookie: `esign_session=${session.token}` },
    });
    await response.arrayBuffer();
    return `HTTP ${response.status}`;
  };
  await measure('web GET /app/ho-so (50 rows)', page('/app/ho-so?pageSize=50'));
  await measure('web GET /app/xu-ly-cong-viec', page('/app/xu-ly-cong-viec'));
  await measure('web GET /app/dashboard', page('/app/dashboard'));

  const { counts } = seeded;
  process.stdout.write(
    `Seeded ${counts.dossiers} dossiers, ${counts.turns} turns, ${counts.tasks} tasks, ${counts.history} history rows, ${guestCount + staffCount} users in ${seeded.seconds.toFixed(1)} s; ${requestCount} requests each through app.request.\n\n`,
  );
  const header = ['request', 'p50', 'p95', 'p99', 'result'];
  const widths = header.map((_, column) =>
    Math.max(...[header, ...rows].map((row) => (row[column] ?? '').length)),
  );
  for (const row of [header, ...rows]) {
    process.stdout.write(
      `${row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd()}\n`,
    );
  }
}

main()
  .then(() => {
    process.stdout.write('\n');
    return benchWebhooks();
  })
  .then(() => {
    process.stdout.write('\n');
    return benchDownload();
  })
  .then(() => {
    process.stdout.write('\n');
    return benchSigning();
  })
  .then(() => {
    process.stdout.write('\n');
    return benchAgent();
  })
  .then(() => {
    process.stdout.write('\n');
    return benchScaleOut();
  })
  .then(() => {
    process.stdout.write('\n');
    return benchStartup();
  })
  .catch((error: unknown) => {
    process.stderr.write(
      `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
