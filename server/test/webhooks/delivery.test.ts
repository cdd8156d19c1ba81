import { Writable } from 'node:stream';
import { runLogged } from '../../../test/support/runLog';
import {
  type ReceivedWebhook,
  signatureMatches,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../../../test/support/webhookReceiver';
import type { AppDeps } from '../../src/context';
import { claimJobs, recordResults } from '../../src/jobs/queue';
import { createLogger } from '../../src/platform/logger';
import { retryDelaysMs } from '../../src/webhooks/events';
import { interruptedAttempt } from '../../src/webhooks/outbox';
import { disableWebhookSubscription, rotateWebhookSecret } from '../../src/webhooks/subscriptions';
import { startWebhookWorker, type WebhookWorker, webhookKind } from '../../src/webhooks/worker';
import { type Harness, type SeededTenant, seedTenant } from '../support/harness';
import {
  attemptRows,
  deliveryRows,
  enqueueCompleted,
  presignedUrl,
  subscribe,
  until,
  webhookHarness,
} from './fixtures';

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(() => receiver.close());

let h: Harness;
let acme: SeededTenant;
let worker: WebhookWorker;
let logs: Record<string, unknown>[];

/** deps with a logger whose lines the test can read. */
function capturingDeps(deps: AppDeps): AppDeps {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { ...deps, logger: createLogger('info', runLogged(sink)) };
}

beforeEach(async () => {
  receiver.received.length = 0;
  logs = [];
  h = webhookHarness();
  acme = await seedTenant(h, 'ACME');
  worker = startWebhookWorker(capturingDeps(h.deps), { poll: false, timeoutMs: 1_000 });
});
afterEach(async () => {
  await worker.stop();
  await h.close();
});

/** A claim by another process (which may then die): its tasks, run only if the test says so. */
const elsewhere: ReturnType<typeof webhookKind>[] = [];
async function claimElsewhere() {
  const kind = webhookKind(h.deps, { leaseMs: 30_000, timeoutMs: 1_000 });
  elsewhere.push(kind);
  return claimJobs(h.deps, [{ kind, limit: 10 }]);
}
afterEach(() => {
  for (const kind of elsewhere.splice(0)) kind.close();
});

const secondsOf = (iso: string) => String(Math.floor(new Date(iso).getTime() / 1000));

async function storedBody(eventId: string): Promise<Buffer> {
  const row = await h.deps.db
    .selectFrom('webhook_events')
    .select('body')
    .where('id', '=', eventId)
    .executeTakeFirstOrThrow();
  return row.body;
}

describe('Request headers and body', () => {
  it('POSTs the stored bytes with the headers of the spec; the signature verifies on the raw bytes', async () => {
    const { secret } = await subscribe(h, 'ACME', receiver.url('/ok'));
    const { eventId } = await enqueueCompleted(h, acme);
    await worker.drain();

    expect(receiver.at('/ok')).toHaveLength(1);
    const [request] = receiver.at('/ok') as [ReceivedWebhook];
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['x-webhook-event']).toBe('document.completed');
    expect(request.headers['x-webhook-id']).toBe(eventId);
    expect(request.headers['user-agent']).toBe('ESign-Webhook/1.0');
    expect(request.headers['x-webhook-timestamp']).toBe(secondsOf(h.now()));
    expect(request.headers['x-webhook-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(
      signatureMatches(request.raw, request.headers['x-webhook-signature'] as string, secret),
    ).toBe(true);
    expect(
      signatureMatches(
        request.raw,
        request.headers['x-webhook-signature'] as string,
        'whsec_wrong',
      ),
    ).toBe(false);
    expect(request.raw.equals(await storedBody(eventId!))).toBe(true);
    // Verified first, parsed after: the presigned URL keeps its literal `&`.
    expect(request.raw.toString('utf8')).toContain(`"url":"${presignedUrl}"`);
    const envelope = JSON.parse(request.raw.toString('utf8')) as {
      id: string;
      data: { files: { url: string }[] };
    };
    expect(envelope.id).toBe(eventId);
    expect(envelope.data.files[0]!.url).toBe(presignedUrl);

    const [delivery] = await deliveryRows(h.deps);
    expect(delivery).toMatchObject({
      status: 'delivered',
      attempts: 1,
      last_http_status: 200,
      last_error: null,
      lease_id: null,
      finished_at: h.now(),
    });
    const [attempt] = await attemptRows(h.deps, delivery!.id);
    expect(attempt).toMatchObject({
      number: 1,
      http_status: 200,
      error: null,
      response_excerpt: 'ok',
      started_at: h.now(),
      finished_at: h.now(),
    });
    expect(attempt!.latency_ms).toEqual(expect.any(Number));
  });
});

describe('Retry schedule', () => {
  it('retries after 1 s, 10 s, 1 min, 10 min, 1 h with the same id and bytes; fails after six attempts and reports it', async () => {
    receiver.answer('/fail', { status: 500, body: 'database down' });
    await subscribe(h, 'ACME', receiver.url('/fail'));
    const { eventId } = await enqueueCompleted(h, acme);
    const delays = [1_000, 10_000, 60_000, 600_000, 3_600_000];

    for (const [index, delay] of delays.entries()) {
      await worker.drain();
      const [delivery] = await deliveryRows(h.deps);
      expect(delivery).toMatchObject({
        status: 'pending',
        attempts: index + 1,
        last_http_status: 500,
        last_error: 'HTTP 500',
        next_attempt_at: new Date(h.clock.now().getTime() + delay).toISOString(),
      });
      // Nothing is sent before its time.
      h.clock.advance(delay - 1);
      await worker.drain();
      expect(receiver.at('/fail')).toHaveLength(index + 1);
      h.clock.advance(1);
    }
    await worker.drain();
    const [delivery] = await deliveryRows(h.deps);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 6, finished_at: h.now() });
    h.clock.advance(24 * 3_600_000);
    await worker.drain();

    const requests = receiver.at('/fail');
    expect(requests).toHaveLength(6);
    const stored = await storedBody(eventId!);
    for (const request of requests) {
      expect(request.headers['x-webhook-id']).toBe(eventId);
      expect(request.raw.equals(stored)).toBe(true);
    }
    const attempts = await attemptRows(h.deps, delivery!.id);
    expect(attempts.map((a) => [a.number, a.http_status, a.response_excerpt])).toEqual(
      [1, 2, 3, 4, 5, 6].map((n) => [n, 500, 'database down']),
    );
    const report = logs.find((line) => line.msg === 'webhook delivery failed: every attempt used');
    expect(report).toMatchObject({ level: 50, eventId, attempts: 6, lastError: 'HTTP 500' });
  });

  it('counts a receiver that hangs past the deadline as status 0 and retries', async () => {
    receiver.answer('/hang', { hang: true });
    await subscribe(h, 'ACME', receiver.url('/hang'));
    await enqueueCompleted(h, acme);
    await worker.drain();
    const [delivery] = await deliveryRows(h.deps);
    expect(delivery).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_http_status: 0,
      last_error: 'OUTBOUND_TIMEOUT: No complete answer within 1000 ms',
    });
    expect(receiver.at('/hang')).toHaveLength(1);
  });

  it('never follows a redirect: the target is not reached and the attempt failed with its status', async () => {
    receiver.answer('/moved', { redirect: receiver.url('/target'), status: 301 });
    await subscribe(h, 'ACME', receiver.url('/moved'));
    await enqueueCompleted(h, acme);
    await worker.drain();
    h.clock.advance(1_000);
    await worker.drain();
    expect(receiver.at('/moved')).toHaveLength(2);
    expect(receiver.at('/target')).toHaveLength(0);
    expect(receiver.server.requests.filter((r) => r.path === '/target')).toHaveLength(0);
    const [delivery] = await deliveryRows(h.deps);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 2, last_http_status: 301 });
    expect(delivery!.last_error).toBe(
      `HTTP 301: redirect not followed (Location: ${receiver.url('/target')})`,
    );
  });

  it('counts a reset connection as status 0 and retries', async () => {
    receiver.answer('/reset', { reset: true });
    await subscribe(h, 'ACME', receiver.url('/reset'));
    await enqueueCompleted(h, acme);
    await worker.drain();
    const [delivery] = await deliveryRows(h.deps);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, last_http_status: 0 });
    expect(delivery!.last_error).toMatch(/^OUTBOUND_UNREACHABLE: /);
  });

  it('takes a 2xx with a huge body as success, keeping 4 KiB of it and leaving the rest unread', async () => {
    const huge = 64 * 1024 * 1024;
    receiver.answer('/huge', { hugeBytes: huge });
    await subscribe(h, 'ACME', receiver.url('/huge'));
    await enqueueCompleted(h, acme);
    await worker.drain();
    const [delivery] = await deliveryRows(h.deps);
    expect(delivery).toMatchObject({ status: 'delivered', last_http_status: 200 });
    const [attempt] = await attemptRows(h.deps, delivery!.id);
    expect(attempt!.response_excerpt).toBe('a'.repeat(4096));
    expect(receiver.hugeWritten()).toBeLessThan(huge);
  });
});

describe('Crash safety: leases and allocation ids', () => {
  it('takes a delivery again when its lease expired, with the same id; the lost attempt is marked interrupted', async () => {
    const { secret } = await subscribe(h, 'ACME', receiver.url('/ok'));
    const { eventId } = await enqueueCompleted(h, acme);
    // A process claims the delivery and dies before sending.
    const [claimed] = await claimElsewhere();
    expect(claimed!.job.id).toBe((await deliveryRows(h.deps))[0]!.job_id);
    await worker.drain();
    expect(receiver.at('/ok')).toHaveLength(0);

    h.clock.advance(30_000);
    await worker.drain();
    expect(receiver.at('/ok')).toHaveLength(1);
    const [request] = receiver.at('/ok');
    expect(request!.headers['x-webhook-id']).toBe(eventId);
    expect(
      signatureMatches(request!.raw, request!.headers['x-webhook-signature'] as string, secret),
    ).toBe(true);
    const [delivery] = await deliveryRows(h.deps);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 2 });
    const attempts = await attemptRows(h.deps, delivery!.id);
    expect(attempts.map((a) => [a.number, a.http_status, a.error])).toEqual([
      [1, null, interruptedAttempt],
      [2, 200, null],
    ]);
  });

  it('records a late result without touching a delivery whose lease another claim took over', async () => {
    await subscribe(h, 'ACME', receiver.url('/ok'));
    await enqueueCompleted(h, acme);
    const [first] = await claimElsewhere();
    h.clock.advance(30_000);
    const [second] = await claimElsewhere();
    expect(second!.job.leaseId).not.toBe(first!.job.leaseId);
    // The first claim's send ends (even successfully) after its lease was taken over.
    const late = await first!.execute();
    expect(late.error).toBeNull();
    expect(await recordResults(h.deps, () => retryDelaysMs, [late])).toEqual(['lease_lost']);
    const [delivery] = await deliveryRows(h.deps);
    expect(delivery).toMatchObject({
      status: 'pending',
      attempts: 2,
      lease_id: second!.job.leaseId,
    });
    const current = await second!.execute();
    expect(await recordResults(h.deps, () => retryDelaysMs, [current])).toEqual(['done']);
    expect((await deliveryRows(h.deps))[0]).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('marks failed, without sending, a delivery whose last attempt was interrupted', async () => {
    await subscribe(h, 'ACME', receiver.url('/ok'));
    await enqueueCompleted(h, acme);
    await h.deps.db.updateTable('jobs').set({ attempts: 5 }).execute();
    await claimElsewhere();
    h.clock.advance(30_000);
    await worker.drain();
    expect(receiver.at('/ok')).toHaveLength(0);
    const [delivery] = await deliveryRows(h.deps);
    expect(delivery).toMatchObject({
      status: 'failed',
      attempts: 6,
      last_error: interruptedAttempt,
    });
  });

  it('stops delivering to a subscription disabled after the event was queued', async () => {
    const { id } = await subscribe(h, 'ACME', receiver.url('/ok'));
    await enqueueCompleted(h, acme);
    await disableWebhookSubscription(h.deps, id);
    await worker.drain();
    expect(receiver.at('/ok')).toHaveLength(0);
    const [delivery] = await deliveryRows(h.deps);
    expect(delivery).toMatchObject({
      status: 'failed',
      attempts: 0,
      last_error: 'subscription disabled',
    });
  });
});

describe('Secret rotation', () => {
  it('signs with the new and the previous secret during the grace period, with the new one only after', async () => {
    const { id, secret: old } = await subscribe(h, 'ACME', receiver.url('/fail'));
    receiver.answer('/fail', { status: 503 });
    const rotated = await rotateWebhookSecret(h.deps, id, 24);
    expect(rotated.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(rotated.previousValidUntil).toBe(
      new Date(h.clock.now().getTime() + 86_400_000).toISOString(),
    );
    await enqueueCompleted(h, acme);
    await worker.drain();
    const [during] = receiver.at('/fail');
    const header = during!.headers['x-webhook-signature'] as string;
    expect(header).toMatch(/^sha256=[0-9a-f]{64} sha256=[0-9a-f]{64}$/);
    expect(signatureMatches(during!.raw, header, rotated.secret)).toBe(true);
    expect(signatureMatches(during!.raw, header, old)).toBe(true);

    // The retry, sent once the grace period is over, carries the new signature only.
    h.clock.advance(86_400_000);
    await worker.drain();
    const [, after] = receiver.at('/fail');
    const single = after!.headers['x-webhook-signature'] as string;
    expect(single).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(signatureMatches(after!.raw, single, rotated.secret)).toBe(true);
    expect(signatureMatches(after!.raw, single, old)).toBe(false);
  });

  it('switches at once with no grace period', async () => {
    const { id, secret: old } = await subscribe(h, 'ACME', receiver.url('/ok'));
    const rotated = await rotateWebhookSecret(h.deps, id, 0);
    expect(rotated.previousValidUntil).toBeNull();
    await enqueueCompleted(h, acme);
    await worker.drain();
    const [request] = receiver.at('/ok');
    const header = request!.headers['x-webhook-signature'] as string;
    expect(signatureMatches(request!.raw, header, rotated.secret)).toBe(true);
    expect(signatureMatches(request!.raw, header, old)).toBe(false);
  });
});

describe('Outbound address policy', () => {
  it('refuses a receiver on a loopback address unless OUTBOUND_ALLOWLIST lets it through, without connecting', async () => {
    const strict = webhookHarness({ OUTBOUND_ALLOWLIST: '' });
    try {
      const tenant = await seedTenant(strict, 'ACME');
      await subscribe(strict, 'ACME', receiver.url('/ok'));
      await enqueueCompleted(strict, tenant);
      const connections = receiver.server.connections.length;
      const strictWorker = startWebhookWorker(strict.deps, { poll: false });
      await strictWorker.drain();
      await strictWorker.stop();
      expect(receiver.server.connections.length).toBe(connections);
      const [delivery] = await deliveryRows(strict.deps);
      expect(delivery).toMatchObject({ status: 'pending', last_http_status: 0 });
      expect(delivery!.last_error).toMatch(/^OUTBOUND_ADDRESS_FORBIDDEN: /);
    } finally {
      await strict.close();
    }
  });
});

describe('Worker loop', () => {
  it('wakes when an event is queued in its process and delivers it without drain()', async () => {
    await subscribe(h, 'ACME', receiver.url('/ok'));
    // A poll far longer than the test: only the wake-up can make it send.
    const live = startWebhookWorker(h.deps, { pollIntervalMs: 3_600_000 });
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const { eventId } = await enqueueCompleted(h, acme);
      await until(
        () => receiver.at('/ok').length > 0,
        () => 'the woken worker to send',
      );
      expect(receiver.at('/ok').map((r) => r.headers['x-webhook-id'])).toEqual([eventId]);
    } finally {
      await live.stop();
    }
    const [delivery] = await deliveryRows(h.deps);
    expect(delivery!.status).toBe('delivered');
  });

  it('claims no more deliveries than it has free slots: one hangs in flight, the next waits unclaimed', async () => {
    receiver.answer('/hang', { hang: true });
    await subscribe(h, 'ACME', receiver.url('/hang'));
    await enqueueCompleted(h, acme);
    await enqueueCompleted(h, acme);
    const live = startWebhookWorker(h.deps, {
      concurrency: 1,
      timeoutMs: 1_000,
      pollIntervalMs: 3_600_000,
    });
    try {
      await until(
        () => receiver.at('/hang').length === 1,
        () => 'one delivery in flight',
      );
      expect((await deliveryRows(h.deps)).map((d) => d.attempts).sort()).toEqual([0, 1]);
    } finally {
      await live.stop();
    }
    const [sent, held] = await deliveryRows(h.deps);
    const inFlight = receiver.at('/hang')[0]!.headers['x-webhook-id'];
    const [first, second] = inFlight === sent!.event_id ? [sent!, held!] : [held!, sent!];
    expect(first).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_http_status: 0,
      lease_id: null,
    });
    expect(second).toMatchObject({
      status: 'pending',
      attempts: 0,
      lease_id: null,
      next_attempt_at: h.now(),
    });
    expect(await attemptRows(h.deps, second.id)).toEqual([]);
    expect(receiver.at('/hang')).toHaveLength(1);
  });

  it('sleeps through the injected sleep between polls and sends the retry once the clock says it is due', async () => {
    receiver.answer('/fail', { status: 500 });
    await subscribe(h, 'ACME', receiver.url('/fail'));
    // Sleeps end only when the test releases them (or a wake-up aborts them): no timer races.
    const sleeps: { ms: number; release: () => void }[] = [];
    const sleep = (ms: number, signal: AbortSignal) =>
      new Promise<void>((resolve) => {
        sleeps.push({ ms, release: resolve });
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
    const live = startWebhookWorker(h.deps, { pollIntervalMs: 250, sleep });
    try {
      // Asleep, then woken by the event; asleep again with nothing in flight and every result
      // recorded: the first attempt is done.
      await live.whenIdle();
      const recorded = live.whenIdle();
      await enqueueCompleted(h, acme);
      await recorded;
      const [first] = await deliveryRows(h.deps);
      expect(first).toMatchObject({ attempts: 1, status: 'pending' });
      expect(first!.next_attempt_at).toBe(new Date(h.clock.now().getTime() + 1_000).toISOString());
      expect(receiver.at('/fail')).toHaveLength(1);
      expect(sleeps.every((s) => s.ms === 250)).toBe(true);

      // Woken by the poll before the retry is due: it looks, finds nothing and sleeps again.
      const looked = live.whenIdle();
      sleeps.at(-1)!.release();
      await looked;
      expect(receiver.at('/fail')).toHaveLength(1);
      expect((await deliveryRows(h.deps))[0]!.attempts).toBe(1);

      // Due by the clock: the next poll sends the retry and records it.
      h.clock.advance(1_000);
      const retried = live.whenIdle();
      sleeps.at(-1)!.release();
      await retried;
      expect((await deliveryRows(h.deps))[0]!.attempts).toBe(2);
      expect(receiver.at('/fail')).toHaveLength(2);
      expect(sleeps.every((s) => s.ms === 250)).toBe(true);
    } finally {
      await live.stop();
    }
  });
});
