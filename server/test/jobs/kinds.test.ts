import BetterSqlite3 from 'better-sqlite3';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhookReceiver';
import { migrations } from '../../src/db/migrations';
import { startRunner } from '../../src/jobs/runner';
import { notifyKinds } from '../../src/notify/worker';
import { webhookKind } from '../../src/webhooks/worker';
import { type Harness, seedTenant } from '../support/harness';
import { deliveryRows, enqueueCompleted, subscribe, webhookHarness } from '../webhooks/fixtures';
import { enqueueJobs, jobRow, testKind } from './fixtures';

/**
 * The queue with the real kinds: a new kind runs next to webhook deliveries and notifications on
 * one runner, and migration 009 moves the state of the old outboxes into it.
 */

jest.setTimeout(60_000);

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(() => receiver.close());

describe('one runner, several kinds', () => {
  let h: Harness;
  beforeEach(() => {
    h = webhookHarness();
  });
  afterEach(() => h.close());

  it('runs a second kind registered next to webhook deliveries and notifications', async () => {
    const acme = await seedTenant(h, 'ACME');
    await subscribe(h, 'ACME', receiver.url('/kinds'));
    const { eventId } = await enqueueCompleted(h, acme);
    const fetched: unknown[] = [];
    const revocation = testKind({
      kind: 'test.revocation_fetch',
      run: async (payload) => {
        fetched.push(payload);
        return 'ok';
      },
    });
    const [jobId] = await enqueueJobs(h, 'test.revocation_fetch', [
      { url: 'https://ca.example/crl' },
    ]);
    const runner = startRunner(
      h.deps,
      [webhookKind(h.deps, { timeoutMs: 5_000 }), ...notifyKinds(h.deps), revocation.kind],
      { poll: false },
    );
    await runner.drain();
    await runner.stop();
    expect(receiver.at('/kinds').map((r) => r.headers['x-webhook-id'])).toEqual([eventId]);
    expect((await deliveryRows(h.deps))[0]).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(fetched).toEqual([{ url: 'https://ca.example/crl' }]);
    expect(await jobRow(h, jobId!)).toMatchObject({ status: 'done', attempts: 1 });
  });

  it('refuses the same kind registered twice', () => {
    const { kind } = testKind();
    expect(() => startRunner(h.deps, [kind, kind])).toThrow('job kind test.echo registered twice');
  });
});

describe('migration 009: the outboxes state moves into jobs', () => {
  it('keeps every delivery and message with its status, attempts, due time and lease', () => {
    const sqlite = new BetterSqlite3(':memory:');
    try {
      for (const migration of migrations.filter((m) => m.version < 9)) sqlite.exec(migration.sql);
      // Only the outbox rows matter here, not the tenants they would belong to.
      sqlite.pragma('foreign_keys = OFF');
      sqlite.exec(`
        INSERT INTO webhook_events (id, tenant_id, organization_id, type, body, created_at)
          VALUES ('evt_1', 1, 1, 'document.completed', x'7b7d', 't0'),
                 ('evt_2', 1, 1, 'document.completed', x'7b7d', 't0');
        INSERT INTO webhook_deliveries (id, event_id, subscription_id, tenant_id, status, attempts,
            max_attempts, next_attempt_at, lease_id, lease_expires_at, last_http_status, last_error,
            created_at, updated_at, finished_at)
          VALUES (1, 'evt_1', 'sub1', 1, 'delivered', 1, 6, 't1', NULL, NULL, 200, NULL, 't0', 't1', 't1'),
                 (2, 'evt_2', 'sub1', 1, 'pending', 2, 6, 't9', 'lease-a', 't9', 500, 'HTTP 500', 't0', 't2', NULL);
        INSERT INTO webhook_attempts (delivery_id, number, lease_id, started_at)
          VALUES (2, 2, 'lease-a', 't2');
        INSERT INTO notify_outbox (id, channel, tenant_id, kind, locale, recipient, route, status,
            attempts, next_attempt_at, lease_id, lease_expires_at, last_error, created_at,
            last_attempt_at, sent_at, provider_message_id)
          VALUES (1, 'mail', 1, 'k', 'vi', 'a@b.example', 'configured', 'sent', 1, 't1', NULL, NULL, NULL, 't0', 't1', 't1', 'm1'),
                 (2, 'sms', 1, 'otp', 'vi', '0912345678', 'configured', 'pending', 1, 't3', 'lease-b', 't8', 'gateway down', 't0', 't2', NULL, NULL),
                 (3, 'mail', 1, 'k', 'vi', 'c@d.example', 'none', 'suppressed', 0, 't0', NULL, NULL, 'sandbox', 't0', NULL, NULL, NULL);
      `);
      sqlite.exec(migrations.find((m) => m.version === 9)!.sql);
      const jobs = sqlite
        .prepare(
          'SELECT id, kind, status, attempts, max_attempts, run_at, lease_id, last_error FROM jobs ORDER BY id',
        )
        .all();
      expect(jobs).toEqual([
        {
          id: 1,
          kind: 'webhook.delivery',
          status: 'done',
          attempts: 1,
          max_attempts: 6,
          run_at: 't1',
          lease_id: null,
          last_error: null,
        },
        {
          id: 2,
          kind: 'webhook.delivery',
          status: 'pending',
          attempts: 2,
          max_attempts: 6,
          run_at: 't9',
          lease_id: 'lease-a',
          last_error: 'HTTP 500',
        },
        {
          id: 3,
          kind: 'notify.mail',
          status: 'done',
          attempts: 1,
          max_attempts: 6,
          run_at: 't1',
          lease_id: null,
          last_error: null,
        },
        // A leased message is due again when its lease expires.
        {
          id: 4,
          kind: 'notify.sms',
          status: 'pending',
          attempts: 1,
          max_attempts: 6,
          run_at: 't8',
          lease_id: 'lease-b',
          last_error: 'gateway down',
        },
      ]);
      expect(
        sqlite
          .prepare('SELECT id, job_id, last_http_status FROM webhook_deliveries ORDER BY id')
          .all(),
      ).toEqual([
        { id: 1, job_id: 1, last_http_status: 200 },
        { id: 2, job_id: 2, last_http_status: 500 },
      ]);
      expect(
        sqlite
          .prepare('SELECT id, job_id, provider_message_id FROM notify_outbox ORDER BY id')
          .all(),
      ).toEqual([
        { id: 1, job_id: 3, provider_message_id: 'm1' },
        { id: 2, job_id: 4, provider_message_id: null },
        // Suppressed: never sent, no job.
        { id: 3, job_id: null, provider_message_id: null },
      ]);
      // jobs is the only table left with claim or lease columns.
      const leased = sqlite
        .prepare(
          "SELECT m.name AS tbl FROM sqlite_master m, pragma_table_info(m.name) c WHERE m.type = 'table' AND c.name IN ('lease_id', 'lease_expires_at', 'next_attempt_at', 'run_at')",
        )
        .all();
      expect(leased).toEqual([{ tbl: 'jobs' }, { tbl: 'jobs' }]);
    } finally {
      sqlite.close();
    }
  });
});
