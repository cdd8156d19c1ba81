import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/platform/config';
import { createHarness, type Harness, seedTenant } from '../support/harness';
import { outboxRow, parseMail, sendInvitation } from './support';

describe('the development mail transport (default): .eml files under DATA_DIR/outbox/mail', () => {
  let h: Harness;
  beforeEach(() => {
    h = createHarness();
  });
  afterEach(() => h.close());

  it('writes one parseable RFC 5322 message per e-mail, CRLF line ends, both parts in UTF-8', async () => {
    const tenantId = (await seedTenant(h, 'ACME')).tenantId;
    const { id, expected } = await sendInvitation(h, tenantId);

    const directory = path.join(h.dataDir, 'outbox', 'mail');
    const files = fs.readdirSync(directory);
    expect(files).toEqual([`20261125T080000Z-notify-${id}.eml`]);
    const raw = fs.readFileSync(path.join(directory, files[0]!));
    const text = raw.toString('latin1');
    expect(
      text
        .split('\n')
        .slice(0, -1)
        .every((line) => line.endsWith('\r')),
    ).toBe(true);
    expect(text).toMatch(/^MIME-Version: 1\.0\r$/m);

    const parsed = parseMail(raw);
    expect(parsed.header('from')).toBe('ESign <no-reply@localhost>');
    expect(parsed.header('to')).toBe('Nguyễn Văn Ánh <anh.nguyen@partner.example>');
    expect(parsed.header('subject')).toBe(expected.subject);
    expect(parsed.text).toBe(expected.text);
    expect(parsed.html).toBe(expected.html);

    const row = await outboxRow(h, id);
    expect(row).toMatchObject({
      status: 'sent',
      provider_message_id: path.join(directory, files[0]!),
      text_body: null,
    });
  });
});

describe('mail settings', () => {
  const base = { DATA_DIR: '/tmp/esign-notify-config' };

  it('defaults: file transport, Vietnamese, From named after the service, outboxes under DATA_DIR', () => {
    expect(loadConfig({ ...base, SERVICE_NAME: 'KySo' }).notify).toEqual({
      locale: 'vi',
      mailFrom: 'KySo <no-reply@localhost>',
      mail: { transport: 'file' },
      sms: { provider: 'file' },
      concurrency: { mail: 4, sms: 4 },
      mailDir: '/tmp/esign-notify-config/outbox/mail',
      smsDir: '/tmp/esign-notify-config/outbox/sms',
    });
  });

  it('MAIL_CONCURRENCY and SMS_CONCURRENCY give each channel its own slots', () => {
    expect(
      loadConfig({ ...base, MAIL_CONCURRENCY: '8', SMS_CONCURRENCY: '2' }).notify.concurrency,
    ).toEqual({ mail: 8, sms: 2 });
    expect(() => loadConfig({ ...base, SMS_CONCURRENCY: '0' })).toThrow(
      'SMS_CONCURRENCY must be a positive integer, got "0"',
    );
  });

  it('SMTP: host, port, implicit TLS or STARTTLS required once credentials are set', () => {
    const smtp = {
      ...base,
      MAIL_TRANSPORT: 'smtp',
      SMTP_HOST: 'mail.example',
      MAIL_FROM: 'a@b.example',
    };
    expect(loadConfig(smtp).notify.mail).toEqual({
      transport: 'smtp',
      host: 'mail.example',
      port: 587,
      secure: false,
      requireTls: false,
      user: undefined,
      password: undefined,
    });
    expect(
      loadConfig({ ...smtp, SMTP_SECURE: '1', SMTP_USER: 'u', SMTP_PASSWORD: 'p' }).notify.mail,
    ).toMatchObject({ port: 465, secure: true, requireTls: false, user: 'u', password: 'p' });
    expect(
      loadConfig({ ...smtp, SMTP_PORT: '2525', SMTP_USER: 'u', SMTP_PASSWORD: 'p' }).notify.mail,
    ).toMatchObject({ port: 2525, secure: false, requireTls: true });
    expect(loadConfig({ ...base, NOTIFY_LOCALE: 'en' }).notify.locale).toBe('en');
  });

  it('refuses incomplete or unknown settings with a configuration error', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ MAIL_TRANSPORT: 'sendmail' }, /MAIL_TRANSPORT must be file or smtp/],
      [{ MAIL_TRANSPORT: 'smtp', MAIL_FROM: 'a@b.example' }, /SMTP_HOST is required/],
      [{ MAIL_TRANSPORT: 'smtp', SMTP_HOST: 'h' }, /MAIL_FROM is required/],
      [
        { MAIL_TRANSPORT: 'smtp', SMTP_HOST: 'h', MAIL_FROM: 'a@b.example', SMTP_PORT: 'x' },
        /SMTP_PORT must be a positive integer/,
      ],
      [
        { MAIL_TRANSPORT: 'smtp', SMTP_HOST: 'h', MAIL_FROM: 'a@b.example', SMTP_SECURE: 'yes' },
        /SMTP_SECURE must be/,
      ],
      [{ NOTIFY_LOCALE: 'fr' }, /NOTIFY_LOCALE must be vi or en/],
    ];
    for (const [env, message] of cases) {
      expect(() => loadConfig({ ...base, ...env })).toThrow(ConfigError);
      expect(() => loadConfig({ ...base, ...env })).toThrow(message);
    }
  });
});
