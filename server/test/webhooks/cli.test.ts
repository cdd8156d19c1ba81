import {
  signatureMatches,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../../../test/support/webhookReceiver';
import { startWebhookWorker, type WebhookWorker } from '../../src/webhooks/worker';
import { runCli } from '../admin/runCli';
import { type Harness, type SeededTenant, seedTenant } from '../support/harness';
import { deliveryRows, enqueueCompleted, subscribe, webhookHarness } from './fixtures';

jest.setTimeout(120_000);

let receiver: WebhookReceiver;
let h: Harness;
let acme: SeededTenant;
let worker: WebhookWorker;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = webhookHarness();
  acme = await seedTenant(h, 'ACME');
  worker = startWebhookWorker(h.deps, { poll: false });
});
afterAll(async () => {
  await worker.stop();
  await h.close();
  await receiver.close();
});

interface DeliveryJson {
  id: number;
  eventId: string;
  status: string;
  attempts: number;
  maxAttempts: number;
  nextAttemptAt: string | null;
  inFlight: boolean;
  lastHttpStatus: number | null;
}

describe('admin webhook deliveries, delivery, redeliver, rotate-secret', () => {
  let subscriptionId: string;
  let deliveryId: number;
  let eventId: string;

  beforeAll(async () => {
    receiver.answer('/flaky', { status: 503, body: 'maintenance' });
    subscriptionId = (await subscribe(h, 'ACME', receiver.url('/flaky'))).id;
    eventId = (await enqueueCompleted(h, acme)).eventId!;
    await worker.drain();
    deliveryId = (await deliveryRows(h.deps))[0]!.id;
  });

  it('lists deliveries with their state, filtered by tenant and status', async () => {
    const all = await runCli(h.dataDir, 'webhook deliveries --tenant ACME --json');
    expect(all.code).toBe(0);
    const { deliveries } = all.json<{ deliveries: DeliveryJson[] }>();
    expect(deliveries).toEqual([
      expect.objectContaining({
        id: deliveryId,
        eventId,
        eventType: 'document.completed',
        tenantCode: 'ACME',
        subscriptionId,
        url: receiver.url('/flaky'),
        status: 'pending',
        attempts: 1,
        maxAttempts: 6,
        nextAttemptAt: new Date(h.clock.now().getTime() + 1_000).toISOString(),
        inFlight: false,
        lastHttpStatus: 503,
        lastError: 'HTTP 503',
      }),
    ]);
    const failed = await runCli(h.dataDir, 'webhook deliveries --status failed --json');
    expect(failed.json()).toEqual({ deliveries: [] });
    const table = await runCli(h.dataDir, 'webhook deliveries');
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+STATUS\s+ATTEMPTS\s+EVENT\s+TYPE/);
    expect(table.stdout).toContain(eventId);
  });

  it('refuses bad arguments with exit 2', async () => {
    const cases: [string, RegExp][] = [
      ['webhook deliveries --status lost', /--status must be one of pending, delivered, failed/],
      ['webhook deliveries --limit 0', /--limit must be a positive integer/],
      ['webhook delivery --id x', /--id must be a positive integer/],
      [
        'webhook rotate-secret --id S --grace-hours 1000',
        /grace-hours must be a whole number from 0 to 720/,
      ],
      ['webhook redeliver', /--id is required/],
    ];
    for (const [command, message] of cases) {
      const result = await runCli(h.dataDir, command);
      expect({ command, code: result.code }).toEqual({ command, code: 2 });
      expect(result.stderr).toMatch(message);
    }
  });

  it('shows one delivery with every attempt, and redelivers by hand with the same id', async () => {
    const shown = await runCli(h.dataDir, `webhook delivery --id ${deliveryId}`);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`Delivery ${deliveryId}: document.completed ${eventId}`);
    expect(shown.stdout).toMatch(/Body: \d+ bytes, sha256 [0-9a-f]{64}/);
    expect(shown.stdout).toMatch(
      new RegExp(`  #1 ${h.now().replace(/\./g, '\\.')} HTTP 503 in \\d+ ms: HTTP 503`),
    );

    // Waiting for its retry: the operator brings it forward.
    const early = await runCli(h.dataDir, `webhook redeliver --id ${deliveryId} --json`);
    expect(early.code).toBe(0);
    const { nextAttemptAt } = early.json<{ previousStatus: string; nextAttemptAt: string }>();
    expect(early.json()).toMatchObject({ id: deliveryId, previousStatus: 'pending' });
    h.clock.set(nextAttemptAt);
    for (let i = 0; i < 5; i++) {
      await worker.drain();
      h.clock.advance(3_600_000);
    }
    const [failed] = await deliveryRows(h.deps);
    expect(failed).toMatchObject({ status: 'failed', attempts: 6 });

    // Failed: one more attempt, same id and bytes, now that the receiver is back.
    receiver.answer('/flaky', { status: 204 });
    const again = await runCli(h.dataDir, `webhook redeliver --id ${deliveryId}`);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`Delivery ${deliveryId} (failed) gets one more attempt`);
    const [pending] = await deliveryRows(h.deps);
    expect(pending).toMatchObject({ status: 'pending', max_attempts: 7 });
    h.clock.set(pending!.next_attempt_at);
    await worker.drain();
    const [delivered] = await deliveryRows(h.deps);
    expect(delivered).toMatchObject({ status: 'delivered', attempts: 7, last_http_status: 204 });
    const requests = receiver.at('/flaky');
    expect(requests).toHaveLength(7);
    expect(new Set(requests.map((r) => r.headers['x-webhook-id']))).toEqual(new Set([eventId]));
    expect(new Set(requests.map((r) => r.raw.toString('base64'))).size).toBe(1);

    const detail = await runCli(h.dataDir, `webhook delivery --id ${deliveryId} --json`);
    const { delivery } = detail.json<{
      delivery: { status: string; attemptList: { number: number; httpStatus: number }[] };
    }>();
    expect(delivery.status).toBe('delivered');
    expect(delivery.attemptList.map((a) => [a.number, a.httpStatus])).toEqual([
      [1, 503],
      [2, 503],
      [3, 503],
      [4, 503],
      [5, 503],
      [6, 503],
      [7, 204],
    ]);
  });

  it('refuses to redeliver an unknown delivery (exit 1) or a webhook.test', async () => {
    const unknown = await runCli(h.dataDir, 'webhook redeliver --id 999999 --json');
    expect(unknown.code).toBe(1);
    expect(unknown.json()).toEqual({
      error: { code: 'WEBHOOK_DELIVERY_NOT_FOUND', message: 'No webhook delivery 999999' },
    });
    const test = await h.request('POST', '/api/integration/webhooks/test', {
      headers: { 'X-API-Key': acme.orgKey },
    });
    expect(test.status).toBe(200);
    const testRow = (await deliveryRows(h.deps)).find((r) => r.event_id.startsWith('evt_test_'))!;
    const refused = await runCli(h.dataDir, `webhook redeliver --id ${testRow.id}`);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('WEBHOOK_TEST_NOT_REDELIVERABLE');
  });

  it('rotates a secret, printed once, the previous one signing beside it during the grace period', async () => {
    const rotated = await runCli(
      h.dataDir,
      `webhook rotate-secret --id ${subscriptionId} --grace-hours 2 --json`,
    );
    expect(rotated.code).toBe(0);
    const { secret, previousValidUntil } = rotated.json<{
      secret: string;
      previousValidUntil: string;
    }>();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    // The CLI runs on the system clock: two hours from its own now.
    expect(new Date(previousValidUntil).getTime()).toBeGreaterThan(Date.now() + 3_500_000);

    const text = await runCli(
      h.dataDir,
      `webhook rotate-secret --id ${subscriptionId} --grace-hours 0`,
    );
    expect(text.code).toBe(0);
    const lines = text.stdout.trim().split('\n');
    expect(lines[0]).toBe(
      `Rotated the secret of webhook subscription ${subscriptionId}; the previous secret no longer signs.`,
    );
    const newest = lines[2]!;
    expect(newest).toMatch(/^whsec_/);

    receiver.answer('/flaky', { status: 200 });
    h.clock.set(new Date());
    receiver.received.length = 0;
    await enqueueCompleted(h, acme);
    await worker.drain();
    const [request] = receiver.at('/flaky');
    const header = request!.headers['x-webhook-signature'] as string;
    expect(signatureMatches(request!.raw, header, newest)).toBe(true);
    expect(signatureMatches(request!.raw, header, secret)).toBe(false);

    const missing = await runCli(h.dataDir, 'webhook rotate-secret --id nope');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('WEBHOOK_SUBSCRIPTION_NOT_FOUND');
  });
});
