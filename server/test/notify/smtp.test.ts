import type { AppDeps } from '../../src/context';
import { inTransaction } from '../../src/db/database';
import { queueMail } from '../../src/notify/outbox';
import { createHarness, type Harness, seedTenant } from '../support/harness';
import {
  capturedLogger,
  manualWorker,
  outboxRow,
  parseMail,
  sendInvitation,
  setDeveloperAccount,
  startSmtpServer,
  type TestSmtpServer,
} from './support';

jest.setTimeout(60_000);

const from = 'ESign <no-reply@esign.example>';

function smtpEnv(port: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    MAIL_TRANSPORT: 'smtp',
    SMTP_HOST: '127.0.0.1',
    SMTP_PORT: String(port),
    MAIL_FROM: from,
    ...extra,
  };
}

function simpleMail(tenantId: number) {
  return {
    tenantId,
    kind: 'task_assigned_internal',
    to: 'binh.tran@company.example',
    toName: 'Trần Thị Bình',
    subject: 'Việc cần xử lý',
    text: 'Xin chào',
    html: '<p>Xin chào</p>',
  };
}

/** Queues the simple e-mail and lets a worker send it once; returns its outbox id. */
async function sendSimpleMail(h: Harness, tenantId: number, deps: AppDeps = h.deps) {
  const { id } = await inTransaction(h.deps.db, (trx) =>
    queueMail(trx, deps, simpleMail(tenantId)),
  );
  const worker = manualWorker(deps);
  await worker.drain();
  await worker.stop();
  return id;
}

describe('notification e-mails through a real SMTP server', () => {
  let smtp: TestSmtpServer;
  let h: Harness;
  let tenantId: number;
  beforeEach(async () => {
    smtp = await startSmtpServer();
    h = createHarness(smtpEnv(smtp.port));
    tenantId = (await seedTenant(h, 'ACME')).tenantId;
  });
  afterEach(async () => {
    await h.close();
    await smtp.close();
  });

  it('delivers subject and both parts with exact Vietnamese text, HTML escaped, From/To and a stable Message-ID', async () => {
    const { id, expected } = await sendInvitation(h, tenantId);

    expect(smtp.received).toHaveLength(1);
    const [received] = smtp.received;
    expect(received!.from).toBe('no-reply@esign.example');
    expect(received!.to).toEqual(['anh.nguyen@partner.example']);
    // Every byte on the wire is ASCII: non-ASCII travels as encoded-words and quoted-printable.
    expect([...received!.raw].every((byte) => byte < 0x80)).toBe(true);

    const parsed = parseMail(received!.raw);
    expect(parsed.header('subject')).toBe('[ESign] Mời bạn ký hồ sơ: Hợp đồng lao động <2026>');
    expect(parsed.header('from')).toBe('ESign <no-reply@esign.example>');
    expect(parsed.header('to')).toBe('Nguyễn Văn Ánh <anh.nguyen@partner.example>');
    expect(parsed.header('message-id')).toBe(`<notify-${id}@esign.example>`);
    expect(parsed.header('date')).toBe('Wed, 25 Nov 2026 08:00:00 +0000');
    expect(parsed.header('content-type')).toMatch(/^multipart\/alternative;/);
    expect(parsed.parts.map((part) => part.headers.get('content-type'))).toEqual([
      'text/plain; charset=utf-8',
      'text/html; charset=utf-8',
    ]);
    expect(parsed.text).toBe(expected.text);
    expect(parsed.html).toBe(expected.html);
    expect(parsed.text).toContain('Kính gửi Nguyễn Văn Ánh,');
    expect(parsed.text).toContain('Mật khẩu: Xy7&<pw>');
    expect(parsed.html).toContain('Hợp đồng lao động &lt;2026&gt;');
    expect(parsed.html).toContain('<strong>Xy7&amp;&lt;pw&gt;</strong>');

    const row = await outboxRow(h, id);
    expect(row).toMatchObject({
      status: 'sent',
      attempts: 1,
      sent_at: '2026-11-25T08:00:00.000Z',
      provider_message_id: `<notify-${id}@esign.example>`,
      last_error: null,
      lease_id: null,
      // The password is not kept once the message is sent.
      text_body: null,
      html_body: null,
    });
  });

  it('retries a refused message on 10 s, 1 min, 5 min, 30 min, 2 h, then marks it failed and logs it', async () => {
    const { logger, lines } = capturedLogger();
    const deps: AppDeps = { ...h.deps, logger };
    const { id } = await inTransaction(h.deps.db, (trx) =>
      queueMail(trx, deps, simpleMail(tenantId)),
    );
    smtp.failNext(6);
    const worker = manualWorker(deps);
    const start = h.clock.now().getTime();
    const schedule: string[] = [];
    const delays = [10_000, 60_000, 300_000, 1_800_000, 7_200_000];
    for (const [index, delay] of delays.entries()) {
      await worker.drain();
      const row = await outboxRow(h, id);
      expect(row).toMatchObject({ status: 'pending', attempts: index + 1, lease_id: null });
      expect(row.last_error).toMatch(/451/);
      schedule.push(row.next_attempt_at!);
      // Not due a millisecond early.
      h.clock.advance(delay - 1);
      await worker.drain();
      expect((await outboxRow(h, id)).attempts).toBe(index + 1);
      h.clock.advance(1);
    }
    let elapsed = 0;
    expect(schedule).toEqual(
      delays.map((delay) => {
        const at = new Date(start + elapsed + delay).toISOString();
        elapsed += delay;
        return at;
      }),
    );
    await worker.drain();
    const row = await outboxRow(h, id);
    expect(row).toMatchObject({ status: 'failed', attempts: 6, lease_id: null });
    expect(row.last_error).toMatch(/451/);
    h.clock.advance(86_400_000);
    await worker.drain();
    expect((await outboxRow(h, id)).attempts).toBe(6);
    await worker.stop();
    expect(smtp.received).toHaveLength(0);

    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged.filter((l) => l.msg === 'notification attempt failed; will retry')).toHaveLength(
      5,
    );
    const failure = logged.find((l) => l.msg === 'notification failed after its last attempt');
    expect(failure).toMatchObject({ level: 50, notifyId: id, channel: 'mail', attempts: 6 });
    expect(lines.join('')).not.toContain('Xin chào');
  });

  it('a temporary failure followed by success delivers the message once, with the same Message-ID', async () => {
    const { id } = await inTransaction(h.deps.db, (trx) =>
      queueMail(trx, h.deps, simpleMail(tenantId)),
    );
    smtp.failNext(1);
    const worker = manualWorker(h.deps);
    await worker.drain();
    h.clock.advance(10_000);
    await worker.drain();
    await worker.stop();
    expect(smtp.received).toHaveLength(1);
    expect(parseMail(smtp.received[0]!.raw).header('message-id')).toBe(
      `<notify-${id}@esign.example>`,
    );
    expect(await outboxRow(h, id)).toMatchObject({
      status: 'sent',
      attempts: 2,
      sent_at: '2026-11-25T08:00:10.000Z',
    });
  });

  it('sandbox: the e-mail reaches only the developer address, with X-Original-To and the notice', async () => {
    await h.close();
    h = createHarness(smtpEnv(smtp.port, { SANDBOX: '1' }));
    tenantId = (await seedTenant(h, 'ACME')).tenantId;
    await setDeveloperAccount(h.deps, tenantId, { email: 'dev@acme.example' });
    await sendSimpleMail(h, tenantId);
    expect(smtp.received.map((m) => m.to)).toEqual([['dev@acme.example']]);
    const parsed = parseMail(smtp.received[0]!.raw);
    expect(parsed.header('to')).toBe('dev@acme.example');
    expect(parsed.header('x-original-to')).toBe('binh.tran@company.example');
    expect(parsed.header('subject')).toBe('[SANDBOX] Việc cần xử lý');
    expect(parsed.text).toBe(
      '[SANDBOX] Thư này được gửi tới địa chỉ của tài khoản nhà phát triển thay cho người nhận thật: binh.tran@company.example.\n\nXin chào',
    );
    expect(parsed.html).toContain('người nhận thật: binh.tran@company.example.</p>');
  });

  it('sandbox without a developer address: nothing reaches the SMTP server', async () => {
    await h.close();
    h = createHarness(smtpEnv(smtp.port, { SANDBOX: '1' }));
    tenantId = (await seedTenant(h, 'ACME')).tenantId;
    const id = await sendSimpleMail(h, tenantId);
    expect(smtp.received).toEqual([]);
    expect(await outboxRow(h, id)).toMatchObject({ status: 'suppressed', attempts: 0 });
  });
});

describe('SMTP with STARTTLS and credentials', () => {
  const auth = { user: 'mailer', password: 'smtp-S3cret-pw' };
  let smtp: TestSmtpServer;
  let h: Harness;
  let tenantId: number;
  beforeEach(async () => {
    smtp = await startSmtpServer({ auth });
  });
  afterEach(async () => {
    await h.close();
    await smtp.close();
  });

  it('authenticates over TLS with SMTP_USER/SMTP_PASSWORD; the password is never logged', async () => {
    h = createHarness(smtpEnv(smtp.port, { SMTP_USER: auth.user, SMTP_PASSWORD: auth.password }));
    tenantId = (await seedTenant(h, 'ACME')).tenantId;
    const { logger, text } = capturedLogger();
    const deps: AppDeps = { ...h.deps, logger };
    await sendSimpleMail(h, tenantId, deps);
    expect(smtp.received.map((m) => m.user)).toEqual(['mailer']);
    expect(text()).toContain('notification sent');
    expect(text()).not.toContain(auth.password);
  });

  it('a wrong password is a failed attempt whose error and logs do not carry the password', async () => {
    h = createHarness(smtpEnv(smtp.port, { SMTP_USER: auth.user, SMTP_PASSWORD: 'wrong-Pw-123' }));
    tenantId = (await seedTenant(h, 'ACME')).tenantId;
    const { logger, text } = capturedLogger();
    const deps: AppDeps = { ...h.deps, logger };
    const id = await sendSimpleMail(h, tenantId, deps);
    const row = await outboxRow(h, id);
    expect(row).toMatchObject({ status: 'pending', attempts: 1 });
    expect(row.last_error).toMatch(/535|auth|Invalid/i);
    expect(row.last_error).not.toContain('wrong-Pw-123');
    expect(text()).not.toContain('wrong-Pw-123');
    expect(smtp.received).toEqual([]);
  });
});

describe('SMTP with implicit TLS (SMTP_SECURE=1)', () => {
  it('delivers over TLS from the first byte, trusting the system CAs (here the test CA)', async () => {
    const smtp = await startSmtpServer({ implicitTls: true });
    const h = createHarness(smtpEnv(smtp.port, { SMTP_SECURE: '1' }));
    try {
      const tenantId = (await seedTenant(h, 'ACME')).tenantId;
      const id = await sendSimpleMail(h, tenantId);
      expect(await outboxRow(h, id)).toMatchObject({ status: 'sent', attempts: 1 });
      expect(parseMail(smtp.received[0]!.raw).header('subject')).toBe('Việc cần xử lý');
    } finally {
      await h.close();
      await smtp.close();
    }
  });
});

describe('an SMTP server that cannot be reached', () => {
  it('counts as a failed attempt, retried later', async () => {
    const smtp = await startSmtpServer();
    const port = smtp.port;
    await smtp.close();
    const h = createHarness(smtpEnv(port));
    try {
      const tenantId = (await seedTenant(h, 'ACME')).tenantId;
      const id = await sendSimpleMail(h, tenantId);
      const row = await outboxRow(h, id);
      expect(row).toMatchObject({
        status: 'pending',
        attempts: 1,
        next_attempt_at: '2026-11-25T08:00:10.000Z',
      });
      expect(row.last_error).toMatch(/ECONNREFUSED/);
    } finally {
      await h.close();
    }
  });
});
