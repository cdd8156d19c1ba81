import { spawn } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { inTransaction, sqliteHandle } from '../../server/src/db/database';
import { loadConfig } from '../../server/src/platform/config';
import { createLogger } from '../../server/src/platform/logger';
import { openRuntime } from '../../server/src/runtime';
import { createTenant } from '../../server/src/tenancy/service';
import { enqueueEvent, webhookJobKind } from '../../server/src/webhooks/events';
import { documentCompletedData } from '../../server/src/webhooks/payloads';
import { createWebhookSubscription } from '../../server/src/webhooks/subscriptions';
import { startWebhookWorker } from '../../server/src/webhooks/worker';

/**
 * Webhook bench: the real outbox and worker on a SQLite file (WAL, synchronous=FULL) delivering
 * to a local HTTPS receiver in another process (test certificate).
 * - throughput: 20,000 events committed at once, then delivered; deliveries per second and CPU
 *   per delivery, against raw keep-alive posts of the same body from a plain Node client (same
 *   receiver, same parallelism) in the same run: the ratio is the figure (target >= 0.5);
 * - commit-to-first-attempt latency: 300 events committed one by one (one transaction each)
 *   while the worker runs; the time from each commit to the start of its first attempt.
 * Each part runs in a child process: the receiver, and the runner (which needs the test CA in
 * NODE_EXTRA_CA_CERTS, read only at process start).
 */

const root = path.resolve(__dirname, '..', '..');
const tlsDir = path.join(root, 'test', 'fixtures', 'tls');
const role = process.env.BENCH_WEBHOOKS_ROLE;
const throughputEvents = Number(process.env.BENCH_WEBHOOK_EVENTS || 20_000);
const latencyEvents = 300;
const concurrency = Number(process.env.WEBHOOK_CONCURRENCY || 16);

function child(roleName: string, extraEnv: Record<string, string> = {}) {
  // BENCH_CPU_PROF_DIR: the runner writes a CPU profile there (`node --cpu-prof`).
  const profile =
    roleName === 'runner' && process.env.BENCH_CPU_PROF_DIR
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`]
      : [];
  return spawn(process.execPath, [...profile, '--import', 'tsx', __filename], {
    cwd: root,
    env: {
      ...process.env,
      BENCH_WEBHOOKS_ROLE: roleName,
      NODE_EXTRA_CA_CERTS: path.join(tlsDir, 'ca.pem'),
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** Receiver: answers every POST with 200 once the body is read; prints its port. */
function runReceiver(): void {
  const server = https.createServer(
    {
      cert: fs.readFileSync(path.join(tlsDir, 'server.pem')),
      key: fs.readFileSync(path.join(tlsDir, 'server-key.pem')),
    },
    (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok'));
    },
  );
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

/**
 * The yardstick: `count` POSTs of `body` over keep-alive connections from a plain Node client,
 * `parallel` at a time, each answer read to its end. Posts per second and CPU ms per post.
 */
async function rawPosts(
  port: number,
  body: Buffer,
  count: number,
  parallel: number,
): Promise<{ perSecond: number; cpuMs: number }> {
  const agent = new https.Agent({ keepAlive: true, maxSockets: parallel });
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const request = https.request(
        {
          host: '127.0.0.1',
          port,
          path: '/raw',
          method: 'POST',
          agent,
          headers: { 'Content-Type': 'application/json', 'Content-Length': body.length },
        },
        (response) => {
          response.resume();
          response.on('end', () =>
            response.statusCode === 200
              ? resolve()
              : reject(new Error(`HTTP ${response.statusCode}`)),
          );
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  let next = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        next += 1;
        await post();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  agent.destroy();
  return { perSecond: count / seconds, cpuMs: (used.user + used.system) / 1000 / count };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

async function runRunner(port: number): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-bench-webhooks-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    APP_ENV: 'development',
    OUTBOUND_ALLOWLIST: '127.0.0.1',
  });
  const { deps, database } = openRuntime(config, { logger: createLogger('warn') });
  try {
    const synchronous = sqliteHandle(database).pragma('synchronous', { simple: true });
    const now = deps.clock.now().toISOString();
    const { tenant, root: organization } = await createTenant(deps.db, now, {
      code: 'BENCH',
      name: 'Bench',
    });
    await createWebhookSubscription(deps, tenant, {
      organizationCode: 'BENCH',
      url: `https://127.0.0.1:${port}/hook`,
    });
    const facts = (i: number) =>
      documentCompletedData({
        documentId: `BENCH-${i}`,
        documentUuid: '00000000-0000-4000-8000-000000000000',
        documentTitle: 'Hợp đồng bench',
        transactionId: `TX-${i}`,
        signedCount: 1,
        metadata: {},
        tenantCode: 'BENCH',
        completedAt: now,
        files: [],
        signers: [],
      });
    const enqueue = (trx: Parameters<Parameters<typeof inTransaction>[1]>[0], i: number) =>
      enqueueEvent(trx, deps, {
        tenantId: tenant.id,
        organizationId: organization.id,
        type: 'document.completed',
        data: facts(i),
      });
    const countDelivered = async () =>
      (
        await deps.db
          .selectFrom('jobs')
          .select(({ fn }) => fn.countAll<number>().as('n'))
          .where('kind', '=', webhookJobKind)
          .where('status', '=', 'done')
          .executeTakeFirstOrThrow()
      ).n;
    const waitDelivered = async (target: number) => {
      while ((await countDelivered()) < target) await new Promise((r) => setTimeout(r, 50));
    };

    // Throughput, then the raw yardstick with the same body, receiver and parallelism.
    await inTransaction(deps.db, async (trx) => {
      for (let i = 0; i < throughputEvents; i++) await enqueue(trx, i);
    });
    const sample = await deps.db
      .selectFrom('webhook_events')
      .select('body')
      .limit(1)
      .executeTakeFirstOrThrow();
    const cpu = process.cpuUsage();
    const started = performance.now();
    const worker = startWebhookWorker(deps, { concurrency });
    await waitDelivered(throughputEvents);
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const cpuMs = (used.user + used.system) / 1000 / throughputEvents;
    const raw = await rawPosts(port, sample.body, throughputEvents, concurrency);
    const perSecond = throughputEvents / seconds;

    // Latency: commits one by one while the worker runs.
    const committedAt = new Map<string, number>();
    for (let i = 0; i < latencyEvents; i++) {
      const { eventId } = await inTransaction(deps.db, (trx) => enqueue(trx, throughputEvents + i));
      committedAt.set(eventId!, Date.now());
      await new Promise((r) => setTimeout(r, 5));
    }
    await waitDelivered(throughputEvents + latencyEvents);
    await worker.stop();
    const firstAttempts = await deps.db
      .selectFrom('webhook_attempts as a')
      .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .select(['d.event_id', 'a.started_at'])
      .where('a.number', '=', 1)
      .where('d.event_id', 'in', [...committedAt.keys()])
      .execute();
    const latencies = firstAttempts
      .map((row) => Date.parse(row.started_at) - committedAt.get(row.event_id)!)
      .sort((a, b) => a - b);
    const retried = await deps.db
      .selectFrom('jobs')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .where('kind', '=', webhookJobKind)
      .where('attempts', '>', 1)
      .executeTakeFirstOrThrow();

    const lines = [
      `webhooks: synchronous=${synchronous === 2 ? 'FULL' : synchronous}, concurrency ${concurrency}, HTTPS receiver in another process, keep-alive connection pool`,
      `webhooks: ${throughputEvents} deliveries in ${seconds.toFixed(2)} s = ${Math.round(perSecond)} deliveries/s, ${cpuMs.toFixed(3)} ms CPU each; ${retried.n} needed a retry`,
      `webhooks: raw keep-alive posts of the same ${sample.body.length}-byte body, plain Node client, same receiver and parallelism: ${Math.round(raw.perSecond)} posts/s, ${raw.cpuMs.toFixed(3)} ms CPU each`,
      `webhooks: ratio deliveries/raw ${(perSecond / raw.perSecond).toFixed(2)} (target >= 0.5: ${perSecond / raw.perSecond >= 0.5 ? 'met' : 'NOT MET; next: commit the queue rounds with synchronous=NORMAL, build the round statements once per batch size, no byte-cap Transform when only the excerpt is kept'})`,
      `webhooks: commit to first attempt over ${latencies.length} events committed one by one: p50 ${percentile(latencies, 50)} ms, p95 ${percentile(latencies, 95)} ms, max ${latencies.at(-1)} ms (same process: the commit wakes the worker)`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await database.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

function firstLine(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      text += chunk;
      const end = text.indexOf('\n');
      if (end !== -1) resolve(text.slice(0, end));
    });
    stream.on('end', () => reject(new Error('the receiver ended before printing its port')));
  });
}

/** Prints deliveries per second and commit-to-first-attempt latency. */
export async function benchWebhooks(): Promise<void> {
  const receiver = child('receiver');
  try {
    const port = await firstLine(receiver.stdout!);
    const runner = child('runner', { BENCH_WEBHOOKS_PORT: port });
    runner.stdout!.pipe(process.stdout, { end: false });
    const code = await new Promise<number | null>((resolve) => runner.on('exit', resolve));
    if (code !== 0) throw new Error(`webhook bench runner exited with ${code}`);
  } finally {
    receiver.kill('SIGTERM');
  }
}

if (role === 'receiver') runReceiver();
else if (role === 'runner') {
  runRunner(Number(process.env.BENCH_WEBHOOKS_PORT)).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : error}\n`);
    process.exit(1);
  });
} else if (process.argv[1] && path.resolve(process.argv[1]) === __filename) {
  void benchWebhooks();
}
