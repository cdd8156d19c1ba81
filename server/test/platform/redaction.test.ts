import crypto from 'node:crypto';
import { buildApp } from '../../src/app';
import { redactCredentials } from '../../src/platform/redaction';
import { createHarness, type Harness } from '../support/harness';
import { linesLogger } from '../support/testLogger';

/** A credential as the service makes them: 32 random bytes, base64url (43 characters). */
const token = () => crypto.randomBytes(32).toString('base64url');

describe('redactCredentials', () => {
  it.each([
    ['/app/ky-so/phien/SESSION', '/app/ky-so/phien/[redacted]'],
    [
      'https://app.example/ky-so/phien/SESSION?lang=vi',
      'https://app.example/ky-so/phien/[redacted]?lang=vi',
    ],
    ['/app/ky-so/INVITATION', '/app/ky-so/[redacted]'],
    ['/app/ky-so/phien/SESSION/tai-lieu', '/app/ky-so/phien/[redacted]/tai-lieu'],
    ['/app/ky-so/INVITATION/ban-da-ky?x=1', '/app/ky-so/[redacted]/ban-da-ky?x=1'],
    ['/app/ky-so/42/tai-lieu', '/app/ky-so/42/tai-lieu'],
    ['/app/ky-so/signing-page.js', '/app/ky-so/signing-page.js'],
    ['/app/ky-so/phien/:token{[A-Za-z0-9_-]+}', '/app/ky-so/phien/:token{[A-Za-z0-9_-]+}'],
    [
      '/api/files/5b0f6a8e-0d0c-4f3e-9d53-3f5a2b1c4d7e?expires=1764057600&signature=ab12',
      '/api/files/5b0f6a8e-0d0c-4f3e-9d53-3f5a2b1c4d7e?expires=1764057600&signature=[redacted]',
    ],
    ['/app?at=SESSION', '/app?at=[redacted]'],
    [
      'https://partner.example/hook?Token=abc&x=1',
      'https://partner.example/hook?Token=[redacted]&x=1',
    ],
    [
      'https://sms.example/send?api_key=k1&to=0912',
      'https://sms.example/send?api_key=[redacted]&to=0912',
    ],
    ['https://sms.example/send?api%5Fkey=k1', 'https://sms.example/send?api%5Fkey=[redacted]'],
    [
      'https://s3.example/f?X-Amz-Credential=c&X-Amz-Signature=s&X-Amz-Expires=60',
      'https://s3.example/f?X-Amz-Credential=[redacted]&X-Amz-Signature=[redacted]&X-Amz-Expires=60',
    ],
    [
      '/x?otp=123456&code=654321&sig=s&refresh_token=r',
      '/x?otp=[redacted]&code=[redacted]&sig=[redacted]&refresh_token=[redacted]',
    ],
    ['/x#at=SESSION', '/x#at=[redacted]'],
    ['Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig', 'Authorization: Bearer [redacted]'],
    ['/api/contracts/abc?page=2&pageSize=20', '/api/contracts/abc?page=2&pageSize=20'],
  ])('%s', (input, expected) => {
    const session = token();
    const invitation = token();
    const fill = (text: string) =>
      text.replaceAll('SESSION', session).replaceAll('INVITATION', invitation);
    expect(redactCredentials(fill(input))).toBe(fill(expected));
  });

  it('redacts inside JSON text and stack traces, up to the quote or the escaped line end', () => {
    const secret = token();
    const line = JSON.stringify({
      err: {
        message: `connect ECONNREFUSED https://partner.example/hook?token=${secret}`,
        stack: `Error: GET /app/ky-so/phien/${secret}\n    at f (x.ts:1:1)`,
      },
    });
    const redacted = redactCredentials(line);
    expect(redacted).not.toContain(secret);
    expect(JSON.parse(redacted)).toEqual({
      err: {
        message: 'connect ECONNREFUSED https://partner.example/hook?token=[redacted]',
        stack: 'Error: GET /app/ky-so/phien/[redacted]\n    at f (x.ts:1:1)',
      },
    });
  });
});

describe('the logs never hold a credential of a URL', () => {
  let h: Harness;
  const lines: string[] = [];
  beforeAll(() => {
    h = createHarness();
  });
  afterAll(() => h.close());

  it('the request log: the signing page links and presigned URLs by route, the tokens redacted', async () => {
    const app = buildApp({ ...h.deps, logger: linesLogger('trace', lines) });
    const session = token();
    const invitation = token();
    const signature = crypto.randomBytes(32).toString('hex');
    const fileUuid = crypto.randomUUID();
    await app.request(`/app/ky-so/phien/${session}`);
    await app.request(`/app/ky-so/phien/${session}/tai-lieu`);
    await app.request(`/app/ky-so/${invitation}`);
    await app.request(`/app/ky-so/${invitation}/ban-da-ky`);
    // Not a token of the right shape: 404, and still not logged.
    await app.request(`/app/ky-so/${invitation}x`);
    await app.request(`/api/files/${fileUuid}?expires=1764057600&signature=${signature}`);
    await app.request(`/app?at=${session}`);
    const text = lines.join('');
    for (const secret of [session, invitation, signature]) expect(text).not.toContain(secret);
    const requests = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((record) => record.msg === 'request')
      .map(({ path, route }) => ({ path, route }));
    expect(requests).toEqual([
      {
        path: '/app/ky-so/phien/[redacted]',
        route: '/app/ky-so/phien/:token{[A-Za-z0-9_-]{16,128}}',
      },
      {
        path: '/app/ky-so/phien/[redacted]/tai-lieu',
        route: '/app/ky-so/phien/:token{[A-Za-z0-9_-]{16,128}}/tai-lieu',
      },
      { path: '/app/ky-so/[redacted]', route: '/app/ky-so/:token{[A-Za-z0-9_-]{43}}' },
      {
        path: '/app/ky-so/[redacted]/ban-da-ky',
        route: '/app/ky-so/:token{[A-Za-z0-9_-]{43}}/ban-da-ky',
      },
      { path: '/app/ky-so/[redacted]', route: '/app/*' },
      {
        path: `/api/files/${fileUuid}?expires=1764057600&signature=[redacted]`,
        route: '/api/files/:fileUuid',
      },
      // Refused by the app's access-token exchange, which every page passes through.
      { path: '/app?at=[redacted]', route: '/app/*' },
    ]);
  });

  it('any line: an error whose message and stack quote a URL with a credential, a header', () => {
    lines.length = 0;
    const logger = linesLogger('trace', lines);
    const secret = token();
    const error = new Error(`GET https://partner.example/hook?access_token=${secret} failed`);
    logger.error({ err: error }, `delivery to /app/ky-so/phien/${secret} failed`);
    logger.warn(
      {
        lastError: `https://sms.example/send?apikey=${secret}: 500`,
        headers: { 'x-signing-token': secret },
      },
      'sms failed',
    );
    logger.info({ note: `Bearer ${secret}` }, 'quoted');
    expect(lines).toHaveLength(3);
    expect(lines.join('')).not.toContain(secret);
    expect(lines.join('')).toContain('access_token=[redacted]');
  });
});
