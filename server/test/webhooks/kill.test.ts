import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { appendRunLog } from '../../../test/support/runLog';
import {
  type ReceivedWebhook,
  signatureMatches,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../../../test/support/webhookReceiver';
import { inTransaction } from '../../src/db/database';
import { loadConfig } from '../../src/platform/config';
import { openRuntime, type Runtime } from '../../src/runtime';
import { createTenant } from '../../src/tenancy/service';
import { enqueueEvent, webhookJobKind } from '../../src/webhooks/events';
import { documentCompletedData } from '../../src/webhooks/payloads';
import { createWebhookSubscription } from '../../src/webhooks/subscriptions';
import { repoRoot } from '../admin/runCli';
import { testLogger } from '../support/testLogger';
import { completedFacts, until } from './fixtures';

/**
 * "No event is lost when the process is killed at any point": the real server (main.ts, with its
 * webhook worker) delivers 1,000 events, is SIGKILLed while requests are in flight, and is
 * started again on the same DATA_DIR.
 */

jest.setTimeout(240_000);

const total = 1000;
const killAt = 200;

let receiver: WebhookReceiver;
let dataDir: string;
let runtime: Runtime;
const children = new Set<ChildProcess>();
/** What the servers wrote to stderr (warnings and errors), shown when the test fails. */
let stderr = '';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function startServer(): Promise<ChildProcess> {
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    APP_ENV: 'development',
    OUTBOUND_ALLOWLIST: '127.0.0.1',
    LOG_LEVEL: 'info',
    // Short leases so the deliveries the killed process held are due again soon.
    WEBHOOK_LEASE_SECONDS: '2',
    WEBHOOK_POLL_MS: '100',
  };
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'NODE_EXTRA_CA_CERTS']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/src/main.ts'], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  // Its log joins the jest run's, checked for the credentials the run was issued.
  child.stdout
    ?.setEncoding('utf8')
    .on('data', (chunk: string) => appendRunLog('server-child', chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  child.on('exit', () => children.delete(child));
  return child;
}

function exited(child: ChildProcess): Promise<NodeJS.Signals | number | null> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve(child.signalCode ?? child.exitCode);
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
}

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-kill-'));
  const config = loadConfig({ DATA_DIR: dataDir, APP_ENV: 'development' });
  runtime = openRuntime(config, { logger: testLogger() });
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await runtime.database.close();
  await receiver.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

it('delivers all 1,000 events across a SIGKILL mid-delivery; duplicates share id and bytes', async () => {
  const { deps } = runtime;
  const now = deps.clock.now().toISOString();
  const { tenant, root } = await createTenant(deps.db, now, { code: 'ACME', name: 'Acme' });
  const { secret } = await createWebhookSubscription(deps, tenant, {
    organizationCode: 'ACME',
    url: receiver.url('/kill'),
  });
  const eventIds = new Set<string>();
  await inTransaction(deps.db, async (trx) => {
    for (let i = 0; i < total; i++) {
      const facts = completedFacts('ACME');
      const { eventId } = await enqueueEvent(trx, deps, {
        tenantId: tenant.id,
        organizationId: root.id,
        type: 'document.completed',
        data: documentCompletedData({ ...facts, documentId: `HD-${i}` }),
      });
      eventIds.add(eventId!);
    }
  });
  expect(eventIds.size).toBe(total);

  // The first server is killed from inside the receiver at its 200th request, before that
  // request is answered: that delivery (and the others in flight) cannot have been recorded.
  const first = await startServer();
  receiver.onReceive(() => {
    if (receiver.received.length === killAt) first.kill('SIGKILL');
  });
  expect(await exited(first)).toBe('SIGKILL');
  const beforeRestart = receiver.received.length;
  expect(beforeRestart).toBeGreaterThanOrEqual(killAt);
  expect(beforeRestart).toBeLessThan(total);
  const delivered = await deps.db
    .selectFrom('jobs')
    .select(({ fn }) => fn.countAll<number>().as('count'))
    .where('kind', '=', webhookJobKind)
    .where('status', '=', 'done')
    .executeTakeFirstOrThrow();
  expect(delivered.count).toBeLessThan(total);

  receiver.onReceive(() => {});
  const second = await startServer();
  await until(
    async () => {
      const row = await deps.db
        .selectFrom('jobs')
        .select(({ fn }) => fn.countAll<number>().as('count'))
        .where('kind', '=', webhookJobKind)
        .where('status', '=', 'done')
        .executeTakeFirstOrThrow();
      return row.count === total;
    },
    () => `every delivery to be marked delivered (server stderr: ${stderr.slice(-2000)})`,
  );
  second.kill('SIGTERM');
  expect(await exited(second)).toBe(0);

  const byId = new Map<string, ReceivedWebhook[]>();
  for (const request of receiver.at('/kill')) {
    const id = request.headers['x-webhook-id'] as string;
    byId.set(id, [...(byId.get(id) ?? []), request]);
  }
  expect(new Set(byId.keys())).toEqual(eventIds);
  let duplicates = 0;
  for (const [id, requests] of byId) {
    const [original, ...again] = requests as [ReceivedWebhook, ...ReceivedWebhook[]];
    expect(JSON.parse(original.raw.toString('utf8')).id).toBe(id);
    expect(
      signatureMatches(original.raw, original.headers['x-webhook-signature'] as string, secret),
    ).toBe(true);
    for (const request of again) {
      expect(request.headers['x-webhook-id']).toBe(id);
      expect(request.raw.equals(original.raw)).toBe(true);
    }
    duplicates += again.length;
  }
  // At least the request the kill interrupted was sent twice.
  expect(duplicates).toBeGreaterThanOrEqual(1);
  expect(receiver.at('/kill').length).toBe(total + duplicates);
  process.stdout.write(
    `kill test: ${beforeRestart} requests before the kill, ${duplicates} duplicate(s) in ${receiver.at('/kill').length} requests; ` +
      'duplicates are expected: delivery is at-least-once, so the attempts in flight at the kill are sent again with the same X-Webhook-Id, and receivers de-duplicate on it\n',
  );
});
