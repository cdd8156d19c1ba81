import { startHttpsServer, type TestHttpsServer } from '../../../test/support/httpsServer';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhookReceiver';
import { inTransaction } from '../../src/db/database';
import { type Runner, startRunner } from '../../src/jobs/runner';
import { queueMail, queueSms } from '../../src/notify/outbox';
import { notifyKinds } from '../../src/notify/worker';
import { enqueueEvent } from '../../src/webhooks/events';
import { documentCompletedData } from '../../src/webhooks/payloads';
import { webhookKind } from '../../src/webhooks/worker';
import { startSmtpServer, type TestSmtpServer } from '../notify/support';
import { createHarness, type Harness, type SeededTenant, seedTenant } from '../support/harness';
import { completedFacts, deliveryRows, subscribe, until } from '../webhooks/fixtures';

/**
 * One job kind cannot starve another. Real components: webhooks go to a local HTTPS receiver
 * that holds its answers, e-mail to a real SMTP server, SMS to an HTTPS gateway. While every
 * webhook slot hangs on the receiver, e-mails and SMS enqueued afterwards still go out; once the
 * receiver answers, the webhooks finish too. No timed bound: each condition gets a generous
 * deadline (30 s here; it holds in well under a second on an idle machine).
 */

jest.setTimeout(120_000);

const webhooks = 24;
const webhookSlots = 4;
const mails = 12;
const texts = 12;

let receiver: WebhookReceiver;
let smtp: TestSmtpServer;
let gateway: TestHttpsServer;
let smsReceived: string[];
let h: Harness;
let runner: Runner | undefined;
let acme: SeededTenant;

beforeEach(async () => {
  receiver = await startWebhookReceiver();
  smtp = await startSmtpServer();
  gateway = await startHttpsServer();
  smsReceived = [];
  gateway.route('/sms', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      smsReceived.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"id":"gw"}');
    });
  });
  h = createHarness({
    OUTBOUND_ALLOWLIST: '127.0.0.1',
    MAIL_TRANSPORT: 'smtp',
    SMTP_HOST: '127.0.0.1',
    SMTP_PORT: String(smtp.port),
    MAIL_FROM: 'ESign <no-reply@esign.example>',
    SMS_PROVIDER: 'http',
    SMS_HTTP_URL: gateway.url('/sms'),
  });
  acme = await seedTenant(h, 'ACME');
});

afterEach(async () => {
  await runner?.stop();
  runner = undefined;
  await h.close();
  await receiver.close();
  await smtp.close();
  await gateway.close();
});

async function enqueueWebhooks(count: number): Promise<void> {
  await inTransaction(h.deps.db, async (trx) => {
    for (let i = 0; i < count; i++) {
      await enqueueEvent(trx, h.deps, {
        tenantId: acme.tenantId,
        organizationId: acme.rootOrganizationId,
        type: 'document.completed',
        data: documentCompletedData({ ...completedFacts('ACME'), documentId: `HD-${i}` }),
      });
    }
  });
}

async function enqueueMessages(): Promise<void> {
  await inTransaction(h.deps.db, async (trx) => {
    for (let i = 0; i < mails; i++) {
      await queueMail(trx, h.deps, {
        tenantId: acme.tenantId,
        kind: 'test',
        to: `signer${i}@partner.example`,
        subject: `Hợp đồng ${i}`,
        text: `Thư ${i}`,
        html: `<p>Thư ${i}</p>`,
      });
    }
    for (let i = 0; i < texts; i++) {
      await queueSms(trx, h.deps, {
        tenantId: acme.tenantId,
        kind: 'test',
        to: `09123456${String(i).padStart(2, '0')}`,
        text: `Tin ${i}`,
      });
    }
  });
}

const doneCount = async (kind: string) =>
  (
    await h.deps.db
      .selectFrom('jobs')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .where('kind', '=', kind)
      .where('status', '=', 'done')
      .executeTakeFirstOrThrow()
  ).n;

it('mail and SMS keep flowing while every webhook slot hangs on a slow receiver; the webhooks finish once it answers', async () => {
  await subscribe(h, 'ACME', receiver.url('/slow'));
  receiver.answer('/slow', { hold: true });
  runner = startRunner(
    h.deps,
    [
      // A deadline far above the test's waits: the sends hang until the receiver answers.
      webhookKind(h.deps, { concurrency: webhookSlots, timeoutMs: 90_000 }),
      ...notifyKinds(h.deps),
    ],
    { pollIntervalMs: 200 },
  );

  await enqueueWebhooks(webhooks);
  await until(
    () => receiver.held('/slow') === webhookSlots,
    () => `${webhookSlots} webhook sends held by the receiver (held ${receiver.held('/slow')})`,
  );

  // Enqueued while every webhook slot hangs (the order of the original incident).
  await enqueueMessages();
  await until(
    () => smtp.received.length === mails && smsReceived.length === texts,
    () =>
      `every message sent (mail ${smtp.received.length}/${mails}, SMS ${smsReceived.length}/${texts})`,
    30_000,
  );
  await until(
    async () =>
      (await doneCount('notify.mail')) === mails && (await doneCount('notify.sms')) === texts,
    () => 'every message recorded as sent',
    30_000,
  );
  // The webhooks were still hanging all along: no more sends than slots, none finished.
  expect(receiver.at('/slow')).toHaveLength(webhookSlots);
  expect(receiver.held('/slow')).toBe(webhookSlots);
  expect(await doneCount('webhook.delivery')).toBe(0);

  receiver.release('/slow');
  await until(
    async () => (await doneCount('webhook.delivery')) === webhooks,
    () => 'every webhook delivered after the receiver answered',
    60_000,
  );
  const rows = await deliveryRows(h.deps);
  expect(rows.every((row) => row.status === 'delivered' && row.attempts === 1)).toBe(true);
  // Every event reached the receiver exactly once.
  expect(new Set(receiver.at('/slow').map((r) => r.headers['x-webhook-id'])).size).toBe(webhooks);
});
