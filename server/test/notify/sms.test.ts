import fs from 'node:fs';
import path from 'node:path';
import {
  type Route,
  routes,
  startHttpsServer,
  type TestHttpsServer,
} from '../../../test/support/httpsServer';
import { inTransaction } from '../../src/db/database';
import { DomainError } from '../../src/errors/domainError';
import { otpSms } from '../../src/notify/messages';
import { queueSms } from '../../src/notify/outbox';
import { devSmsIdPrefix, fillTemplate, httpSmsProvider, readDevSms } from '../../src/notify/sms';
import { emptyAllowlist } from '../../src/outbound/addressPolicy';
import { ConfigError, loadConfig } from '../../src/platform/config';
import { createHarness, type Harness, seedTenant } from '../support/harness';
import { manualWorker, outboxRow, setDeveloperAccount } from './support';

jest.setTimeout(60_000);

interface Captured {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Records the request with its body and answers `status` with `answer`. */
function capture(into: Captured[], status = 200, answer = '{"messageId":"gw-1"}'): Route {
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      into.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(answer);
    });
  };
}

const awkwardText = 'Mã "OTP": 042917 \\ dòng 2\nline & more <tag> 100% +84';

describe('HTTP SMS gateway against a real HTTPS server', () => {
  let gateway: TestHttpsServer;
  let h: Harness | undefined;
  let captured: Captured[];
  beforeEach(async () => {
    gateway = await startHttpsServer();
    captured = [];
  });
  afterEach(async () => {
    await h?.close();
    h = undefined;
    await gateway.close();
  });

  async function harness(env: Record<string, string>) {
    h = createHarness({
      SMS_PROVIDER: 'http',
      SMS_HTTP_URL: gateway.url('/sms'),
      OUTBOUND_ALLOWLIST: '127.0.0.1',
      ...env,
    });
    const tenantId = (await seedTenant(h, 'ACME')).tenantId;
    return { h, tenantId };
  }

  async function sendOne(harnessed: { h: Harness; tenantId: number }, to: string, text: string) {
    const { id } = await inTransaction(harnessed.h.deps.db, (trx) =>
      queueSms(trx, harnessed.h.deps, { tenantId: harnessed.tenantId, kind: 'otp', to, text }),
    );
    const worker = manualWorker(harnessed.h.deps);
    await worker.drain();
    await worker.stop();
    return outboxRow(harnessed.h, id);
  }

  it('default JSON template: the values are JSON-escaped inside the strings, headers as configured', async () => {
    gateway.route('/sms', capture(captured));
    const setup = await harness({ SMS_HTTP_HEADERS: '{"X-Api-Key":"gw-key-1"}' });
    const row = await sendOne(setup, '0912 345 678', awkwardText);
    expect(captured).toHaveLength(1);
    const [request] = captured;
    expect(request!.method).toBe('POST');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['x-api-key']).toBe('gw-key-1');
    expect(JSON.parse(request!.body)).toEqual({ to: '0912345678', text: awkwardText });
    expect(row).toMatchObject({ status: 'sent', attempts: 1, provider_message_id: 'gw-1' });
  });

  it('SMS_HTTP_AUTHORIZATION reaches the gateway as its Authorization header', async () => {
    gateway.route('/sms', capture(captured));
    const setup = await harness({ SMS_HTTP_AUTHORIZATION: 'Basic dXNlcjpzZWNyZXQ=' });
    const row = await sendOne(setup, '0912345678', 'Mã OTP: 123456');
    expect(captured).toHaveLength(1);
    expect(captured[0]!.headers.authorization).toBe('Basic dXNlcjpzZWNyZXQ=');
    expect(row).toMatchObject({ status: 'sent', attempts: 1 });
  });

  it('form template: the values are form-encoded (UTF-8, + for space, & and = escaped)', async () => {
    gateway.route('/sms', capture(captured, 202, 'OK'));
    const setup = await harness({
      SMS_HTTP_HEADERS: '{"Content-Type":"application/x-www-form-urlencoded"}',
      SMS_HTTP_BODY_TEMPLATE: 'phone={{to}}&msg={{text}}&brand=ESIGN',
    });
    const row = await sendOne(setup, '+84912345678', awkwardText);
    const form = new URLSearchParams(captured[0]!.body);
    expect([...form.entries()]).toEqual([
      ['phone', '+84912345678'],
      ['msg', awkwardText],
      ['brand', 'ESIGN'],
    ]);
    expect(captured[0]!.body).toContain('msg=M%C3%A3+%22OTP%22');
    expect(row).toMatchObject({ status: 'sent', provider_message_id: null });
  });

  it('GET: placeholders in the URL query are URL-encoded', async () => {
    gateway.route('/sms', capture(captured));
    const setup = await harness({
      SMS_HTTP_METHOD: 'GET',
      SMS_HTTP_URL: `${gateway.url('/sms')}?to={{to}}&text={{text}}&key=k1`,
    });
    await sendOne(setup, '0912345678', awkwardText);
    const url = new URL(captured[0]!.url, 'https://gateway.test');
    expect(captured[0]!.method).toBe('GET');
    expect(url.searchParams.get('to')).toBe('0912345678');
    expect(url.searchParams.get('text')).toBe(awkwardText);
    expect(url.searchParams.get('key')).toBe('k1');
  });

  it('a 2xx answer too large to read is still a sent message (never sent twice)', async () => {
    gateway.route('/sms', capture(captured, 200, `{"id":"${'x'.repeat(64 * 1024)}"}`));
    const setup = await harness({});
    const row = await sendOne(setup, '0912345678', 'hello');
    expect(captured).toHaveLength(1);
    expect(row).toMatchObject({ status: 'sent', attempts: 1, provider_message_id: null });
  });

  it('a non-2xx answer is a failed attempt, retried 10 s later', async () => {
    gateway.route('/sms', capture(captured, 500, '{"error":"echo Mã OTP 042917"}'));
    const setup = await harness({});
    const row = await sendOne(setup, '0912345678', otpSms('vi', '042917', 5));
    expect(row).toMatchObject({
      status: 'pending',
      attempts: 1,
      next_attempt_at: '2026-11-25T08:00:10.000Z',
      last_error: 'SMS gateway answered HTTP 500',
    });
  });

  it('a redirect is a failure and its target is never requested', async () => {
    gateway.route('/sms', routes.redirect(gateway.url('/elsewhere')));
    gateway.route('/elsewhere', capture(captured));
    const setup = await harness({});
    const row = await sendOne(setup, '0912345678', 'hello');
    expect(row.last_error).toBe('SMS gateway answered HTTP 302');
    expect(gateway.requests.map((r) => r.path)).toEqual(['/sms']);
    expect(captured).toEqual([]);
  });

  it('a private address outside OUTBOUND_ALLOWLIST is refused without a connection', async () => {
    gateway.route('/sms', capture(captured));
    const setup = await harness({ OUTBOUND_ALLOWLIST: '' });
    const row = await sendOne(setup, '0912345678', 'hello');
    expect(row.status).toBe('pending');
    expect(row.last_error).toMatch(/^OUTBOUND_ADDRESS_FORBIDDEN/);
    expect(gateway.connections).toEqual([]);
  });

  it('a host name that resolves to a private address is refused without a connection', async () => {
    const provider = httpSmsProvider(
      {
        provider: 'http',
        url: `https://sms-gateway.example:${gateway.port}/sms`,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        bodyTemplate: '{"to":"{{to}}","text":"{{text}}"}',
      },
      {
        allowlist: emptyAllowlist,
        resolver: async () => [{ address: '127.0.0.1', family: 4 }],
      },
    );
    const error = await provider.send('0912345678', 'x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('OUTBOUND_ADDRESS_FORBIDDEN');
    expect(gateway.connections).toEqual([]);
  });

  it('sandbox: the gateway gets only the developer phone, with the real number in the text', async () => {
    gateway.route('/sms', capture(captured));
    const setup = await harness({ SANDBOX: '1' });
    await setDeveloperAccount(setup.h.deps, setup.tenantId, { phone: '0987000111' });
    await sendOne(setup, '0912345678', 'Ma OTP 042917');
    expect(captured.map((c) => JSON.parse(c.body))).toEqual([
      { to: '0987000111', text: '[SANDBOX -> 0912345678] Ma OTP 042917' },
    ]);
  });

  it('sandbox without a developer phone: the gateway gets nothing, the dev file outbox gets it', async () => {
    gateway.route('/sms', capture(captured));
    const setup = await harness({ SANDBOX: '1' });
    const row = await sendOne(setup, '0912345678', 'Ma OTP 042917');
    expect(captured).toEqual([]);
    expect(gateway.connections).toEqual([]);
    expect(row).toMatchObject({ status: 'sent', route: 'dev_file' });
    const lines = readDevSms(setup.h.deps.config.notify.smsDir);
    const line = lines.get(row.provider_message_id!.slice(devSmsIdPrefix.length));
    expect(line).toEqual({
      id: expect.any(String),
      at: '2026-11-25T08:00:00.000Z',
      to: '0912345678',
      text: '[SANDBOX -> 0912345678] Ma OTP 042917',
    });
  });
});

describe('SMS provider settings', () => {
  const base = { DATA_DIR: '/tmp/esign-notify-config', SMS_PROVIDER: 'http' };

  it('refuses an http:// or missing gateway URL and credentials headers the safe client never sends', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ SMS_HTTP_URL: 'http://sms.example/send' }, /SMS_HTTP_URL must use https/],
      [{}, /SMS_HTTP_URL must be an absolute https URL/],
      [
        { SMS_HTTP_URL: 'https://sms.example', SMS_HTTP_HEADERS: '{"Authorization":"Basic x"}' },
        /SMS_HTTP_HEADERS may not set Authorization/,
      ],
      [
        { SMS_HTTP_URL: 'https://sms.example', SMS_HTTP_HEADERS: '["x"]' },
        /SMS_HTTP_HEADERS must be a JSON object/,
      ],
      [
        { SMS_HTTP_URL: 'https://sms.example', SMS_HTTP_METHOD: 'PUT' },
        /SMS_HTTP_METHOD must be GET or POST/,
      ],
      [
        {
          SMS_HTTP_URL: 'https://sms.example',
          SMS_HTTP_METHOD: 'GET',
          SMS_HTTP_BODY_TEMPLATE: 'x',
        },
        /cannot be used with SMS_HTTP_METHOD=GET/,
      ],
      [{ SMS_PROVIDER: 'twilio' }, /SMS_PROVIDER must be file or http/],
    ];
    for (const [env, message] of cases) {
      expect(() => loadConfig({ ...base, ...env })).toThrow(ConfigError);
      expect(() => loadConfig({ ...base, ...env })).toThrow(message);
    }
  });

  it('refuses a JSON body template that is not JSON once filled in', () => {
    const config = loadConfig({
      ...base,
      SMS_HTTP_URL: 'https://sms.example/send',
      SMS_HTTP_BODY_TEMPLATE: '{"to":{{to}},"text":"{{text}}"}',
    });
    const settings = config.notify.sms;
    if (settings.provider !== 'http') throw new Error('expected the http provider');
    expect(() => httpSmsProvider(settings, { allowlist: emptyAllowlist })).toThrow(
      /SMS_HTTP_BODY_TEMPLATE is not valid JSON/,
    );
  });

  it('fillTemplate replaces every {{to}} and {{text}}, spaces inside the braces allowed', () => {
    expect(
      fillTemplate('{{to}}|{{ text }}|{{to}}|{{other}}', { to: 'A', text: 'B' }, (v) => `<${v}>`),
    ).toBe('<A>|<B>|<A>|{{other}}');
  });
});

describe('the development SMS provider (default)', () => {
  it('appends one JSON line per message under DATA_DIR/outbox/sms', async () => {
    const h = createHarness();
    try {
      const tenantId = (await seedTenant(h, 'ACME')).tenantId;
      await inTransaction(h.deps.db, async (trx) => {
        await queueSms(trx, h.deps, { tenantId, kind: 'otp', to: '0912345678', text: 'Một' });
        await queueSms(trx, h.deps, { tenantId, kind: 'otp', to: '0912345679', text: 'Hai' });
      });
      const worker = manualWorker(h.deps);
      await worker.drain();
      await worker.stop();
      const file = path.join(h.dataDir, 'outbox', 'sms', 'messages.jsonl');
      const lines = fs
        .readFileSync(file, 'utf8')
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, string>);
      expect(lines.map((l) => [l.to, l.text, l.at])).toEqual([
        ['0912345678', 'Một', '2026-11-25T08:00:00.000Z'],
        ['0912345679', 'Hai', '2026-11-25T08:00:00.000Z'],
      ]);
    } finally {
      await h.close();
    }
  });
});
