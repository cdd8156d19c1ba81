import { startWebhookReceiver } from '../../../test/support/webhookReceiver';
import { startWebhookWorker } from '../../src/webhooks/worker';
import { hdldBody, openWorld, type World } from '../dossiers/fixtures';
import {
  manualWorker,
  parseMail,
  setDeveloperAccount,
  startSmtpServer,
  type TestSmtpServer,
} from '../notify/support';
import { tasksOf } from '../support/dossiers';
import { subscribe } from '../webhooks/fixtures';
import { anh, type EventSetup, envelopeOf, eventSetup, hdmbDossier } from './fixtures';

jest.setTimeout(60_000);

/** For each test of the describe: a real SMTP server and the event setup sending through it. */
function withSmtp(env: Record<string, string> = {}) {
  const context = {} as { smtp: TestSmtpServer; s: EventSetup };
  beforeEach(async () => {
    context.smtp = await startSmtpServer();
    context.s = await eventSetup({
      MAIL_TRANSPORT: 'smtp',
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(context.smtp.port),
      MAIL_FROM: 'ESign <no-reply@esign.example>',
      ...env,
    });
  });
  afterEach(async () => {
    await context.s.close();
    await context.smtp.close();
  });
  return context;
}

/** Sends what the notify outbox holds, once. */
async function sendMail(s: EventSetup) {
  const mail = manualWorker(s.h.deps);
  await mail.drain();
  await mail.stop();
}

describe('an invitation through a real SMTP server', () => {
  const context = withSmtp();

  test('the outside signer of the first step gets the e-mail with the task link and user name', async () => {
    const { s, smtp } = context;
    const { h, world } = s;
    const created = await hdmbDossier(world, 'HD-700');
    await sendMail(s);

    expect(smtp.received.map((received) => received.to)).toEqual([[anh.email]]);
    const parsed = parseMail(smtp.received[0]!.raw);
    expect(parsed.header('subject')).toBe('[ESign] Mời bạn ký hồ sơ: Hợp đồng HD-700 & phụ lục');
    expect(parsed.header('to')).toBe(`${anh.fullName} <${anh.email}>`);
    const [task] = await tasksOf(h, created.id);
    expect(parsed.text).toContain(`${h.deps.config.appUrl}/tasks?id=${task!.id}`);
    expect(parsed.text).toContain(anh.identityNumber); // the existing account's user name
    expect(parsed.html).toContain('Hợp đồng HD-700 &amp; phụ lục');
  });
});

describe('sandbox mode (SANDBOX=1)', () => {
  const context = withSmtp({ SANDBOX: '1' });

  test("the invitation reaches only the developer's address, never the signer", async () => {
    const { s, smtp } = context;
    const { h, world } = s;
    await setDeveloperAccount(h.deps, world.acme.id, { email: 'dev@partner.example' });
    await hdmbDossier(world, 'HD-701');
    await sendMail(s);

    expect(smtp.received.map((received) => received.to)).toEqual([['dev@partner.example']]);
    const parsed = parseMail(smtp.received[0]!.raw);
    expect(parsed.header('x-original-to')).toBe(anh.email);
    expect(parsed.header('subject')).toMatch(/^\[SANDBOX\]/);
  });
});

describe('a dossier created through endpoint 1', () => {
  let world: World;
  beforeEach(async () => {
    world = await openWorld();
  });
  afterEach(() => world.close());

  test('announces its first step (a role step) to every holder of the role, e-mails included', async () => {
    const { h } = world;
    const receiver = await startWebhookReceiver();
    const worker = startWebhookWorker(h.deps, { poll: false, timeoutMs: 5_000 });
    try {
      await subscribe(h, 'ACME', receiver.url('/hooks'), ['notification.task_assigned_internal']);
      const body = hdldBody(world);
      const response = await world.create(body);
      expect(response.status).toBe(201);
      await worker.drain();

      expect(receiver.received).toHaveLength(1);
      const envelope = envelopeOf(receiver.received[0]!);
      expect(envelope.type).toBe('notification.task_assigned_internal');
      expect(envelope.data).toMatchObject({
        documentId: body.documentId,
        documentTitle: body.documentTitle,
        totalSteps: 4,
        step: { stepCode: 'APPROVE', stepName: 'Phòng Pháp chế duyệt', order: 1 },
        recipients: [
          {
            type: 'internal',
            name: 'Lê Thị Luật',
            email: 'phap.che1@acme.example',
            phone: '0901000000',
            credentials: null,
          },
          {
            type: 'internal',
            name: 'Phạm Văn Lý',
            email: 'phap.che2@acme.example',
            phone: '0901000000',
            credentials: null,
          },
        ],
        prevActorName: null,
      });
      // Internal notification e-mails are sent by the service even when the event is delegated.
      const mails = await h.deps.db
        .selectFrom('notify_outbox')
        .select(['kind', 'recipient'])
        .orderBy('id')
        .execute();
      expect(mails).toEqual([
        { kind: 'task_assigned_internal', recipient: 'phap.che1@acme.example' },
        { kind: 'task_assigned_internal', recipient: 'phap.che2@acme.example' },
      ]);
    } finally {
      await worker.stop();
      await receiver.close();
    }
  });
});
