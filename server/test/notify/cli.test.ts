import fs from 'node:fs';
import { inTransaction } from '../../src/db/database';
import { contractMail, otpSms } from '../../src/notify/messages';
import { queueNotification } from '../../src/notify/notifications';
import { queueMail, queueSms } from '../../src/notify/outbox';
import type { OutboxView } from '../../src/notify/views';
import { runCli } from '../admin/runCli';
import { createHarness, type Harness, seedTenant } from '../support/harness';
import {
  externalRecipient,
  failingProvider,
  internalRecipient,
  manualWorker,
  sampleData,
} from './support';

jest.setTimeout(120_000);

/** A link long enough that quoted-printable breaks its line in the `.eml` file. */
const invitationLink = `http://127.0.0.1:3000/app/ky-so/${'Ab-_9'.repeat(9)}`;

describe('admin mail last / mail show / sms last', () => {
  let h: Harness;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    h = createHarness();
    const tenantId = (await seedTenant(h, 'ACME')).tenantId;
    const other = (await seedTenant(h, 'OTHER')).tenantId;
    const { queued } = await inTransaction(h.deps.db, (trx) =>
      queueNotification(trx, h.deps, {
        tenantId,
        event: 'notification.task_assigned_external',
        data: sampleData({
          recipients: [
            internalRecipient(),
            externalRecipient({ credentials: { userName: 'anh.nguyen', password: 'Xy7&pw' } }),
          ],
        }),
        delegatedByWebhook: false,
      }),
    );
    ids.internal = queued[0]!.id;
    ids.withPassword = queued[1]!.id;
    // A contract invitation: its link opens the signing page, so the body is stored encrypted.
    const invitation = contractMail(
      'invitation',
      {
        recipientName: 'Nguyễn Văn Ánh',
        contractId: 'c-1',
        contractTitle: 'Hợp đồng mua bán số 02/2026',
        senderName: 'Trần Thị Bình',
        link: invitationLink,
        deadline: '2026-12-02T08:00:00.000Z',
        reason: null,
      },
      { locale: 'vi', serviceName: 'ESign' },
    );
    expect(invitation.sensitive).toBe(true);
    ids.invitation = (
      await inTransaction(h.deps.db, (trx) =>
        queueMail(trx, h.deps, {
          tenantId,
          kind: 'contract_invitation',
          to: 'anh@example.com',
          toName: 'Nguyễn Văn Ánh',
          ...invitation,
        }),
      )
    ).id;
    ids.otp = (
      await inTransaction(h.deps.db, (trx) =>
        queueSms(trx, h.deps, {
          tenantId,
          kind: 'otp',
          to: '0912345678',
          text: otpSms('vi', '042917', 5),
          sensitive: true,
        }),
      )
    ).id;
    // Sent by the development outboxes.
    const worker = manualWorker(h.deps);
    await worker.drain();
    await worker.stop();
    ids.otherTenant = (
      await inTransaction(h.deps.db, (trx) =>
        queueMail(trx, h.deps, {
          tenantId: other,
          kind: 'task_rejected',
          to: 'someone@other.example',
          subject: 'Hồ sơ bị từ chối',
          text: 'Lý do: sai',
          html: '<p>Lý do: sai</p>',
        }),
      )
    ).id;
    ids.failingSms = (
      await inTransaction(h.deps.db, (trx) =>
        queueSms(trx, h.deps, { tenantId, kind: 'otp', to: '0912000111', text: 'Ma 1' }),
      )
    ).id;
    const failing = manualWorker(h.deps, { sms: failingProvider });
    await failing.drain();
    await failing.stop();
  });
  afterAll(() => h.close());

  it('mail last --json: newest first, recipient, status, attempts and subject; no hidden body', async () => {
    const result = await runCli(h.dataDir, 'mail last --json');
    expect(result.code).toBe(0);
    const { messages } = result.json<{ messages: OutboxView[] }>();
    expect(messages.map((m) => [m.id, m.tenantCode, m.to, m.status, m.attempts])).toEqual([
      [ids.otherTenant, 'OTHER', 'someone@other.example', 'sent', 1],
      [ids.invitation, 'ACME', 'anh@example.com', 'sent', 1],
      [ids.withPassword, 'ACME', 'anh.nguyen@partner.example', 'sent', 1],
      [ids.internal, 'ACME', 'binh.tran@company.example', 'sent', 1],
    ]);
    const sensitive = messages[2]!;
    expect(sensitive).toMatchObject({
      sensitive: true,
      text: null,
      subject: '[ESign] Mời bạn ký hồ sơ: Hợp đồng lao động <2026>',
      toName: 'Nguyễn Văn Ánh',
      sentAt: '2026-11-25T08:00:00.000Z',
    });
    expect(result.stdout).not.toContain('Xy7&pw');
  });

  it('mail last filters by recipient (any case), tenant and limit; prints a table for people', async () => {
    const [byAddress, byTenant, limited, human] = await Promise.all([
      runCli(h.dataDir, 'mail last --to BINH.TRAN@company.example --json'),
      runCli(h.dataDir, 'mail last --tenant OTHER --json'),
      runCli(h.dataDir, 'mail last --limit 1 --json'),
      runCli(h.dataDir, 'mail last --tenant ACME'),
    ]);
    expect(byAddress.json<{ messages: OutboxView[] }>().messages.map((m) => m.id)).toEqual([
      ids.internal,
    ]);
    expect(byTenant.json<{ messages: OutboxView[] }>().messages.map((m) => m.id)).toEqual([
      ids.otherTenant,
    ]);
    expect(limited.json<{ messages: OutboxView[] }>().messages).toHaveLength(1);
    expect(human.code).toBe(0);
    const lines = human.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+CREATED\s+STATUS\s+KIND\s+TO\s+SENT TO\s+TRIES\s+SUBJECT$/);
    expect(lines[2]).toContain('anh.nguyen@partner.example');
    expect(lines[2]).toContain('[ESign] Mời bạn ký hồ sơ: Hợp đồng lao động <2026>');
    expect(lines).toHaveLength(4);
  });

  it('mail show: every fact and the plain-text part; the HTML part with --json', async () => {
    const [human, json, sensitive] = await Promise.all([
      runCli(h.dataDir, `mail show --id ${ids.internal}`),
      runCli(h.dataDir, `mail show --id ${ids.internal} --json`),
      runCli(h.dataDir, `mail show --id ${ids.withPassword}`),
    ]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`E-mail ${ids.internal}\n`);
    expect(human.stdout).toContain('To:           Trần Thị Bình <binh.tran@company.example>\n');
    expect(human.stdout).toContain('Status:       sent\n');
    expect(human.stdout).toContain(
      'Subject:      [ESign] Mời bạn ký hồ sơ: Hợp đồng lao động <2026>\n',
    );
    expect(human.stdout).toMatch(
      /Provider id:\s+\/.*outbox\/mail\/20261125T080000Z-notify-\d+\.eml/,
    );
    expect(human.stdout).toContain('Kính gửi Trần Thị Bình,');

    const { message } = json.json<{ message: OutboxView & { html: string } }>();
    expect(message.html).toContain('<p>Kính gửi Trần Thị Bình,</p>');

    // Sensitive: erased from the notify outbox once sent, shown from the development outbox
    // (the database, whichever instance sent it; the .eml file is this instance's copy) while
    // it holds the message.
    expect(sensitive.stdout).toContain('Xy7&pw');
    const file = /Provider id:\s+(\S+\.eml)/.exec(sensitive.stdout)![1]!;
    fs.rmSync(file);
    const kept = await runCli(h.dataDir, `mail show --id ${ids.withPassword}`);
    expect(kept.stdout).toContain('Xy7&pw');
    await h.deps.db.deleteFrom('dev_outbox').where('provider_message_id', '=', file).execute();
    const gone = await runCli(h.dataDir, `mail show --id ${ids.withPassword}`);
    expect(gone.stdout).toContain('[sensitive (a password, a code or a signing link): not shown]');
    expect(gone.stdout).not.toContain('Xy7&pw');
  });

  it('mail show: a contract invitation with its signing link, from the development .eml file', async () => {
    const [human, json] = await Promise.all([
      runCli(h.dataDir, `mail show --id ${ids.invitation}`),
      runCli(h.dataDir, `mail show --id ${ids.invitation} --json`),
    ]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('Kind:         contract_invitation (vi)\n');
    expect(human.stdout).toContain('Kính gửi Nguyễn Văn Ánh,');
    // Whole on one line although the file breaks it (quoted-printable soft line breaks).
    expect(human.stdout.split('\n')).toContainEqual(expect.stringContaining(invitationLink));
    const { message } = json.json<{ message: OutboxView & { html: string } }>();
    expect(message).toMatchObject({
      sensitive: true,
      text: expect.stringContaining(invitationLink),
    });
    expect(message.html).toContain(`href="${invitationLink}"`);
  });

  it('sms last: text, status and error; an OTP is shown from the development outbox file only', async () => {
    const result = await runCli(h.dataDir, 'sms last --json');
    const { messages } = result.json<{ messages: OutboxView[] }>();
    expect(messages.map((m) => [m.id, m.to, m.status, m.attempts, m.lastError, m.text])).toEqual([
      [ids.failingSms, '0912000111', 'pending', 1, 'gateway down', 'Ma 1'],
      [
        ids.otp,
        '0912345678',
        'sent',
        1,
        null,
        'Ma OTP cua ban la 042917, co hieu luc trong 5 phut. Khong chia se ma nay voi bat ky ai.',
      ],
    ]);
    const byPhone = await runCli(h.dataDir, ['sms', 'last', '--to', '0912 345 678']);
    expect(byPhone.code).toBe(0);
    expect(byPhone.stdout).toContain('Ma OTP cua ban la 042917');
    expect(byPhone.stdout).not.toContain('0912000111');
  });

  it('an unknown message or tenant is refused with exit 1 and its code', async () => {
    const [missing, sms, tenant] = await Promise.all([
      runCli(h.dataDir, 'mail show --id 999999 --json'),
      runCli(h.dataDir, `mail show --id ${ids.otp}`),
      runCli(h.dataDir, 'mail last --tenant NOPE'),
    ]);
    expect(missing.code).toBe(1);
    expect(missing.json()).toEqual({
      error: { code: 'NOTIFY_MESSAGE_NOT_FOUND', message: 'No e-mail 999999 in the outbox' },
    });
    // An SMS id is not an e-mail.
    expect(sms.code).toBe(1);
    expect(sms.stderr).toContain('NOTIFY_MESSAGE_NOT_FOUND');
    expect(tenant.code).toBe(1);
  });

  it('bad arguments exit 2 before the database is opened', async () => {
    const cases: [string, RegExp][] = [
      ['mail last --limit 0', /--limit must be a positive integer/],
      ['mail last --limit 201', /--limit must be at most 200/],
      ['mail last --to not-an-address', /--to is not an e-mail address/],
      ['sms last --to abc', /--to is not a phone number/],
      ['mail show', /--id is required/],
      ['mail show --id x', /--id must be a positive integer/],
      ['mail frob', /unknown command "mail frob"; mail has: mail last, mail show/],
    ];
    const results = await Promise.all(
      cases.map(([args]) => runCli('/nonexistent/never-created', args)),
    );
    cases.forEach(([args, message], index) => {
      expect({ args, code: results[index]!.code }).toEqual({ args, code: 2 });
      expect(results[index]!.stderr).toMatch(message);
    });
  });
});
