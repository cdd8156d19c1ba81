import { inTransaction } from '../../src/db/database';
import { DomainError } from '../../src/errors/domainError';
import { errorAnswer } from '../../src/http/errorStatuses';
import { queueNotification } from '../../src/notify/notifications';
import { queueMail, queueSms } from '../../src/notify/outbox';
import { shouldSendEmail } from '../../src/notify/policy';
import { decryptSecret } from '../../src/platform/secrets';
import { createHarness, type Harness, seedTenant } from '../support/harness';
import {
  externalRecipient,
  internalRecipient,
  outboxRows,
  sampleData,
  setDeveloperAccount,
} from './support';

const mail = (tenantId: number, to = 'anh.nguyen@partner.example') => ({
  tenantId,
  kind: 'task_assigned_external',
  to,
  toName: 'Nguyễn Văn Ánh',
  subject: 'Mời bạn ký hồ sơ',
  text: 'Xin chào',
  html: '<p>Xin chào</p>',
});

const rows = outboxRows;

describe('shouldSendEmail: who sends a notification e-mail', () => {
  it.each([
    ['internal', false, true],
    ['internal', true, true],
    ['external', false, true],
    ['external', true, false],
  ] as const)(
    '%s recipient, delegated by webhook: %s → sent by the service: %s',
    (recipientType, delegatedByWebhook, expected) => {
      expect(shouldSendEmail({ recipientType, delegatedByWebhook })).toBe(expected);
    },
  );
});

describe('the outbox commits or rolls back with the caller', () => {
  let h: Harness;
  let tenantId: number;
  beforeEach(async () => {
    h = createHarness();
    tenantId = (await seedTenant(h, 'ACME')).tenantId;
  });
  afterEach(() => h.close());

  it('a message queued in a transaction that commits is pending, due now, with no attempt yet', async () => {
    const queued = await inTransaction(h.deps.db, (trx) => queueMail(trx, h.deps, mail(tenantId)));
    expect(queued).toEqual({
      id: expect.any(Number),
      channel: 'mail',
      status: 'pending',
      sendTo: 'anh.nguyen@partner.example',
      sandbox: false,
    });
    const [row] = await rows(h);
    expect(row).toMatchObject({
      channel: 'mail',
      tenant_id: tenantId,
      kind: 'task_assigned_external',
      locale: 'vi',
      recipient: 'anh.nguyen@partner.example',
      recipient_name: 'Nguyễn Văn Ánh',
      send_to: 'anh.nguyen@partner.example',
      route: 'configured',
      sandbox: 0,
      subject: 'Mời bạn ký hồ sơ',
      text_body: 'Xin chào',
      html_body: '<p>Xin chào</p>',
      status: 'pending',
      attempts: 0,
      next_attempt_at: '2026-11-25T08:00:00.000Z',
      created_at: '2026-11-25T08:00:00.000Z',
      lease_id: null,
    });
  });

  it('a message queued in a transaction that then throws is not stored', async () => {
    await expect(
      inTransaction(h.deps.db, async (trx) => {
        await queueMail(trx, h.deps, mail(tenantId));
        await queueSms(trx, h.deps, { tenantId, kind: 'otp', to: '0912345678', text: 'x' });
        throw new Error('the business write failed');
      }),
    ).rejects.toThrow('the business write failed');
    expect(await rows(h)).toEqual([]);
  });

  it('refuses an unusable address or phone number with 400 VALIDATION_ERROR', async () => {
    const refused = async (work: Promise<unknown>) => {
      const error = await work.then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(DomainError);
      return errorAnswer(error as DomainError).body;
    };
    expect(
      await refused(
        inTransaction(h.deps.db, (trx) =>
          queueMail(trx, h.deps, mail(tenantId, 'a@b\r\nBcc: x@y')),
        ),
      ),
    ).toMatchObject({ statusCode: 400, code: 'VALIDATION_ERROR', details: { field: 'to' } });
    expect(
      await refused(
        inTransaction(h.deps.db, (trx) =>
          queueMail(trx, h.deps, { ...mail(tenantId), subject: 'a\r\nBcc: x@y.example' }),
        ),
      ),
    ).toMatchObject({ statusCode: 400, details: { field: 'subject' } });
    expect(
      await refused(
        inTransaction(h.deps.db, (trx) =>
          queueSms(trx, h.deps, { tenantId, kind: 'otp', to: '12-ab', text: 'x' }),
        ),
      ),
    ).toMatchObject({ statusCode: 400, details: { field: 'to' } });
    expect(await rows(h)).toEqual([]);
  });

  it('stores phone numbers normalized and sensitive bodies encrypted', async () => {
    await inTransaction(h.deps.db, async (trx) => {
      await queueSms(trx, h.deps, {
        tenantId,
        kind: 'otp',
        to: '+84 912.345-678',
        text: 'Ma OTP cua ban la 042917',
        sensitive: true,
        discardAfter: new Date('2026-11-25T08:05:00.000Z'),
      });
      await queueMail(trx, h.deps, {
        ...mail(tenantId),
        text: 'Mật khẩu: Xy7&pw',
        html: '<p>Mật khẩu: Xy7&amp;pw</p>',
        sensitive: true,
      });
    });
    const [sms, email] = await rows(h);
    expect(sms).toMatchObject({ recipient: '+84912345678', send_to: '+84912345678', sensitive: 1 });
    expect(sms!.discard_after).toBe('2026-11-25T08:05:00.000Z');
    expect(sms!.text_body).not.toContain('042917');
    expect(decryptSecret(h.deps.secrets, sms!.text_body!)).toBe('Ma OTP cua ban la 042917');
    expect(email!.text_body).not.toContain('Xy7');
    expect(email!.html_body).not.toContain('Xy7');
    expect(decryptSecret(h.deps.secrets, email!.html_body!)).toBe('<p>Mật khẩu: Xy7&amp;pw</p>');
  });
});

describe('sandbox routing, decided at queue time', () => {
  let h: Harness;
  let tenantId: number;
  beforeEach(async () => {
    h = createHarness({ SANDBOX: '1' });
    tenantId = (await seedTenant(h, 'ACME')).tenantId;
  });
  afterEach(() => h.close());

  it('e-mail goes only to the developer address, marked, naming the real recipient', async () => {
    await setDeveloperAccount(h.deps, tenantId, { email: 'dev@acme.example' });
    const queued = await inTransaction(h.deps.db, (trx) => queueMail(trx, h.deps, mail(tenantId)));
    expect(queued).toMatchObject({ status: 'pending', sendTo: 'dev@acme.example', sandbox: true });
    const [row] = await rows(h);
    expect(row).toMatchObject({
      recipient: 'anh.nguyen@partner.example',
      send_to: 'dev@acme.example',
      sandbox: 1,
      route: 'configured',
      subject: '[SANDBOX] Mời bạn ký hồ sơ',
    });
    expect(row!.text_body).toBe(
      '[SANDBOX] Thư này được gửi tới địa chỉ của tài khoản nhà phát triển thay cho người nhận thật: anh.nguyen@partner.example.\n\nXin chào',
    );
  });

  it('without a developer address the e-mail is sent to nobody and recorded as suppressed', async () => {
    const queued = await inTransaction(h.deps.db, (trx) =>
      queueMail(trx, h.deps, { ...mail(tenantId), sensitive: true }),
    );
    expect(queued).toMatchObject({ status: 'suppressed', sendTo: null, sandbox: true });
    const [row] = await rows(h);
    expect(row).toMatchObject({
      status: 'suppressed',
      send_to: null,
      route: 'none',
      last_error: 'sandbox: the tenant has no developer address',
      // A suppressed message is final: its sensitive body is not kept.
      text_body: null,
      html_body: null,
    });
  });

  it('SMS go only to the developer phone, or to the development file outbox without one', async () => {
    await inTransaction(h.deps.db, (trx) =>
      queueSms(trx, h.deps, { tenantId, kind: 'otp', to: '0912345678', text: 'Ma OTP 1' }),
    );
    await setDeveloperAccount(h.deps, tenantId, { phone: '0987 000 111' });
    await inTransaction(h.deps.db, (trx) =>
      queueSms(trx, h.deps, { tenantId, kind: 'otp', to: '0912345678', text: 'Ma OTP 2' }),
    );
    const [first, second] = await rows(h);
    expect(first).toMatchObject({
      recipient: '0912345678',
      send_to: '0912345678',
      route: 'dev_file',
      sandbox: 1,
      status: 'pending',
      text_body: '[SANDBOX -> 0912345678] Ma OTP 1',
    });
    expect(second).toMatchObject({
      recipient: '0912345678',
      send_to: '0987000111',
      route: 'configured',
      sandbox: 1,
      text_body: '[SANDBOX -> 0912345678] Ma OTP 2',
    });
  });
});

describe('queueNotification: the e-mails of one notification.* event', () => {
  let h: Harness;
  let tenantId: number;
  beforeEach(async () => {
    h = createHarness({ NOTIFY_LOCALE: 'en' });
    tenantId = (await seedTenant(h, 'ACME')).tenantId;
  });
  afterEach(() => h.close());

  const recipients = [
    internalRecipient(),
    externalRecipient({ credentials: { userName: 'anh.nguyen', password: 'Xy7&pw' } }),
    externalRecipient({ name: 'Phạm Minh', email: null, phone: '0912 000 222' }),
    externalRecipient({ name: 'Ánh again', email: 'ANH.NGUYEN@partner.example' }),
    externalRecipient({ name: 'Nobody', email: null, phone: null }),
  ];

  it('not delegated: one e-mail per address, the phone-only signer by SMS, duplicates once', async () => {
    const outcome = await inTransaction(h.deps.db, (trx) =>
      queueNotification(trx, h.deps, {
        tenantId,
        event: 'notification.task_assigned_external',
        data: sampleData({ recipients }),
        delegatedByWebhook: false,
      }),
    );
    expect(outcome.queued.map((q) => [q.recipientName, q.channel, q.sendTo])).toEqual([
      ['Trần Thị Bình', 'mail', 'binh.tran@company.example'],
      ['Nguyễn Văn Ánh', 'mail', 'anh.nguyen@partner.example'],
      ['Phạm Minh', 'sms', '0912000222'],
    ]);
    expect(outcome.skipped).toEqual([
      { recipientName: 'Ánh again', reason: 'duplicate_address' },
      { recipientName: 'Nobody', reason: 'no_usable_address' },
    ]);
    const stored = await rows(h);
    expect(stored.map((r) => [r.kind, r.locale, r.sensitive, r.subject])).toEqual([
      [
        'task_assigned_external',
        'en',
        0,
        '[ESign] You are invited to sign: Hợp đồng lao động <2026>',
      ],
      [
        'task_assigned_external',
        'en',
        1,
        '[ESign] You are invited to sign: Hợp đồng lao động <2026>',
      ],
      ['task_assigned_external', 'en', 0, null],
    ]);
    expect(stored[2]!.text_body).toBe(
      'ESign: You are invited to sign "Hop dong lao dong <2026>". Sign at: https://sign.example/ky-so/abc?token=t1&lang=vi',
    );
  });

  it('delegated to a webhook: internal recipients still get the e-mail, external ones do not', async () => {
    const outcome = await inTransaction(h.deps.db, (trx) =>
      queueNotification(trx, h.deps, {
        tenantId,
        event: 'notification.task_assigned_external',
        data: sampleData({ recipients }),
        delegatedByWebhook: true,
        locale: 'vi',
      }),
    );
    expect(outcome.queued.map((q) => q.sendTo)).toEqual(['binh.tran@company.example']);
    expect(outcome.skipped.map((s) => s.reason)).toEqual([
      'delegated_to_webhook',
      'delegated_to_webhook',
      'delegated_to_webhook',
      'delegated_to_webhook',
    ]);
    const [row] = await rows(h);
    expect(row!.subject).toBe('[ESign] Mời bạn ký hồ sơ: Hợp đồng lao động <2026>');
  });

  it('other kinds never text a phone-only recipient', async () => {
    const outcome = await inTransaction(h.deps.db, (trx) =>
      queueNotification(trx, h.deps, {
        tenantId,
        event: 'notification.task_rejected',
        data: sampleData({ recipients: [recipients[2]!], note: 'Sai' }),
        delegatedByWebhook: false,
      }),
    );
    expect(outcome).toEqual({
      queued: [],
      skipped: [{ recipientName: 'Phạm Minh', reason: 'no_usable_address' }],
    });
  });
});
