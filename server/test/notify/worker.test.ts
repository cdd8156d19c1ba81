import { inTransaction } from '../../src/db/database';
import { claimJobs, recordResults } from '../../src/jobs/queue';
import { defaultRetryDelaysMs, queueMail, queueSms } from '../../src/notify/outbox';
import type { SmsProvider } from '../../src/notify/sms';
import { notifyKinds, startNotifyWorker } from '../../src/notify/worker';
import { createHarness, type Harness, seedTenant } from '../support/harness';
import { failingProvider, manualWorker, outboxRow, recordingProvider } from './support';

jest.setTimeout(60_000);

describe('notify worker: leases, crashes and completion', () => {
  let h: Harness;
  let tenantId: number;
  beforeEach(async () => {
    h = createHarness();
    tenantId = (await seedTenant(h, 'ACME')).tenantId;
  });
  afterEach(() => h.close());

  /** A claim of the SMS kind by another sender (which may then die); run only if told. */
  async function claimElsewhere(sms: SmsProvider = recordingProvider()) {
    const [, smsKind] = notifyKinds(h.deps, { sms, leaseMs: 300_000 });
    return claimJobs(h.deps, [{ kind: smsKind!, limit: 10 }]);
  }

  const queueOtp = (text = 'Ma OTP 042917', discardAfter?: Date) =>
    inTransaction(h.deps.db, (trx) =>
      queueSms(trx, h.deps, {
        tenantId,
        kind: 'otp',
        to: '0912345678',
        text,
        sensitive: true,
        ...(discardAfter ? { discardAfter } : {}),
      }),
    );

  it('a message leased by a sender that died is sent once its lease has expired', async () => {
    const { id } = await queueOtp();
    // A worker claims the row and is killed before it sends or records anything.
    const [dead] = await claimElsewhere();
    expect(dead!.job.attempt).toBe(1);
    expect(await outboxRow(h, id)).toMatchObject({ attempts: 1, lease_id: dead!.job.leaseId });

    const sms = recordingProvider();
    const worker = manualWorker(h.deps, { sms });
    await worker.drain();
    expect(sms.sent).toEqual([]);
    h.clock.advance(299_999);
    await worker.drain();
    expect(sms.sent).toEqual([]);
    h.clock.advance(1);
    await worker.drain();
    expect(sms.sent).toEqual([{ to: '0912345678', text: 'Ma OTP 042917' }]);
    expect(await outboxRow(h, id)).toMatchObject({
      status: 'sent',
      attempts: 2,
      provider_message_id: 'p-1',
      text_body: null,
      lease_id: null,
    });

    // The dead worker's late completion no longer holds the lease and changes nothing.
    const late = await dead!.execute();
    expect(await recordResults(h.deps, () => defaultRetryDelaysMs, [late])).toEqual(['lease_lost']);
    expect((await outboxRow(h, id)).provider_message_id).toBe('p-1');
    await worker.stop();
  });

  it('a message whose last attempt was cut off is failed when its lease expires, not retried forever', async () => {
    const { id } = await queueOtp();
    const worker = manualWorker(h.deps, { sms: failingProvider, retryDelaysMs: [1000] });
    for (let attempt = 1; attempt <= 5; attempt++) {
      await worker.drain();
      h.clock.advance(1000);
    }
    expect(await outboxRow(h, id)).toMatchObject({ status: 'pending', attempts: 5 });
    // The sixth (last) attempt is claimed by a sender that dies.
    await claimElsewhere();
    h.clock.advance(300_000);
    await worker.drain();
    expect(await outboxRow(h, id)).toMatchObject({
      status: 'failed',
      attempts: 6,
      last_error: 'the last attempt was interrupted (lease expired)',
      text_body: null,
    });
    await worker.stop();
  });

  it('an SMS past its discardAfter instant is failed instead of sent', async () => {
    const { id } = await queueOtp('Ma OTP 1', new Date(h.clock.now().getTime() + 300_000));
    const worker = manualWorker(h.deps, { sms: failingProvider });
    await worker.drain();
    expect(await outboxRow(h, id)).toMatchObject({ status: 'pending', attempts: 1 });
    h.clock.advance(300_000);
    const sms = recordingProvider();
    const later = manualWorker(h.deps, { sms });
    await later.drain();
    expect(sms.sent).toEqual([]);
    expect(await outboxRow(h, id)).toMatchObject({
      status: 'failed',
      attempts: 1,
      last_error: 'discarded: not sent before discard_after',
      text_body: null,
    });
    await worker.stop();
    await later.stop();
  });

  it('two workers draining the same outbox send every message exactly once', async () => {
    await inTransaction(h.deps.db, async (trx) => {
      for (let i = 0; i < 60; i++) {
        await queueSms(trx, h.deps, { tenantId, kind: 'otp', to: '0912345678', text: `m${i}` });
      }
    });
    const first = recordingProvider();
    const second = recordingProvider();
    const a = manualWorker(h.deps, { sms: first, concurrency: 7 });
    const b = manualWorker(h.deps, { sms: second, concurrency: 5 });
    await Promise.all([a.drain(), b.drain()]);
    const texts = [...first.sent, ...second.sent].map((s) => s.text).sort();
    expect(texts).toEqual(Array.from({ length: 60 }, (_, i) => `m${i}`).sort());
    const statuses = await h.deps.db
      .selectFrom('jobs')
      .select(({ fn }) => ['status', fn.countAll<number>().as('count')])
      .where('kind', '=', 'notify.sms')
      .groupBy('status')
      .execute();
    expect(statuses).toEqual([{ status: 'done', count: 60 }]);
    await Promise.all([a.stop(), b.stop()]);
  });

  it('stop() waits for the send in flight, which is then recorded', async () => {
    const { id } = await queueOtp();
    let release: () => void = () => {};
    let started: () => void = () => {};
    const begun = new Promise<void>((resolve) => {
      started = resolve;
    });
    const slow: SmsProvider = {
      send: () =>
        new Promise((resolve) => {
          started();
          release = () => resolve({ providerMessageId: 'slow-1' });
        }),
    };
    const worker = manualWorker(h.deps, { sms: slow });
    const draining = worker.drain();
    await begun;
    let stopped = false;
    const stopping = worker.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    release();
    await Promise.all([draining, stopping]);
    expect(await outboxRow(h, id)).toMatchObject({ status: 'sent', provider_message_id: 'slow-1' });
  });

  it('with real timers the worker polls by itself and sends what is queued', async () => {
    const sms = recordingProvider();
    const worker = startNotifyWorker(h.deps, { sms, pollIntervalMs: 20 });
    try {
      const { id } = await queueOtp('polled');
      const deadline = Date.now() + 20_000;
      while ((await outboxRow(h, id)).status !== 'sent' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(sms.sent).toEqual([{ to: '0912345678', text: 'polled' }]);
    } finally {
      await worker.stop();
    }
  });

  it('a message without a body to send (a corrupted row) fails its attempt without crashing the worker', async () => {
    const { id } = await inTransaction(h.deps.db, (trx) =>
      queueMail(trx, h.deps, {
        tenantId,
        kind: 'test',
        to: 'a@b.example',
        subject: 's',
        text: 't',
        html: '<p>t</p>',
        sensitive: true,
      }),
    );
    await h.deps.db
      .updateTable('notify_outbox')
      .set({ text_body: 'not-a-sealed-value' })
      .where('id', '=', id)
      .execute();
    const worker = manualWorker(h.deps);
    await worker.drain();
    await worker.stop();
    const row = await outboxRow(h, id);
    expect(row).toMatchObject({ status: 'pending', attempts: 1 });
    expect(row.last_error).toBe('unknown sealed secret format');
  });
});
