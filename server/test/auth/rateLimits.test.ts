import { issueToken } from '../../src/auth/tokens';
import { createHarness, globalKey, type Harness, type SeededTenant } from '../support/harness';
import {
  errorOf,
  expectUnauthorized,
  oneMinute,
  orgKey,
  type ProbeApp,
  probeApp,
  send,
  spec401,
  tenantUser,
  twoTenants,
  wrongKey,
} from './fixtures';

/** The defaults apply: an empty variable counts as unset. */
const defaultLimits = { RATE_LIMIT_AUTH: '', RATE_LIMIT_API: '', RATE_LIMIT_UPLOAD: '' };

let h: Harness, app: ProbeApp, acme: SeededTenant;

beforeAll(async () => {
  ({ h, app, acme } = await twoTenants({ env: defaultLimits }));
  await tenantUser(h, acme, { username: 'signer@partner.example', type: 'external' });
});
afterAll(() => h.close());

/** Each test starts at the beginning of a fresh one-minute window. */
beforeEach(() => {
  const now = h.clock.now().getTime();
  h.clock.set(new Date(now - (now % oneMinute) + oneMinute));
});

const refresh = (address: string, headers: Record<string, string> = {}) =>
  send(app, 'POST', '/api/auth/refresh', { address, headers, json: { refreshToken: 'rt_nope' } });

const partnerLogin = (key: string, address = '198.51.100.1') =>
  send(app, 'POST', '/api/auth/partner-login', {
    address,
    headers: { 'x-api-key': key },
    json: { username: 'signer@partner.example' },
  });

async function expectTooMany(response: Response, retryAfter: string) {
  expect(response.status).toBe(429);
  expect(response.headers.get('Retry-After')).toBe(retryAfter);
  expect(await errorOf(response)).toEqual({
    statusCode: 429,
    message: 'Too many requests, retry later',
    error: 'Too Many Requests',
    code: 'RATE_LIMITED',
  });
}

async function statuses(count: number, request: () => Promise<Response>): Promise<number[]> {
  const seen: number[] = [];
  for (let index = 0; index < count; index += 1) seen.push((await request()).status);
  return seen;
}

describe('Limits: rate limits', () => {
  it('the defaults are 10 (auth), 100 (normal API) and 10 (upload) requests per minute', () => {
    expect(h.deps.config.rateLimits).toEqual({ auth: 10, api: 100, upload: 10 });
  });

  it('/auth/*: 10 requests per minute; over the limit HTTP 429 with Retry-After', async () => {
    expect(await statuses(10, () => refresh('203.0.113.10'))).toEqual(Array(10).fill(401));
    await expectTooMany(await refresh('203.0.113.10'), '60');
    h.clock.advance(45_000);
    await expectTooMany(await refresh('203.0.113.10'), '15');
  });

  it('/auth/*: login, refresh and login-server share one budget per client address', async () => {
    const address = '203.0.113.11';
    const seen = [
      ...(await statuses(4, () => refresh(address))),
      ...(await statuses(3, () =>
        send(app, 'POST', '/api/auth/login-server', {
          address,
          json: { secretKey: acme.orgKey, cccd: '000000000000' },
        }),
      )),
      ...(await statuses(3, () =>
        send(app, 'POST', '/api/auth/login', { address, json: { username: 'x' } }),
      )),
    ];
    expect(seen).toEqual([401, 401, 401, 401, 404, 404, 404, 400, 400, 400]);
    const eleventh = await send(app, 'POST', '/api/auth/login', {
      address,
      json: { username: 'admin.acme', password: 'whatever' },
    });
    await expectTooMany(eleventh, '60');
  });

  it('anonymous requests are counted per client address', async () => {
    await statuses(10, () => refresh('203.0.113.12'));
    expect((await refresh('203.0.113.12')).status).toBe(429);
    expect((await refresh('203.0.113.13')).status).toBe(401);
  });

  it('X-Forwarded-For is not trusted unless TRUST_PROXY=1 (no fresh budget by header)', async () => {
    for (let index = 0; index < 10; index += 1) {
      await refresh('203.0.113.14', { 'X-Forwarded-For': `10.0.0.${index}` });
    }
    const spoofed = await refresh('203.0.113.14', { 'X-Forwarded-For': '10.0.1.1' });
    expect(spoofed.status).toBe(429);

    const proxied = createHarness({ ...defaultLimits, TRUST_PROXY: '1' });
    try {
      const behindProxy = probeApp(proxied.deps);
      const viaProxy = (client: string) =>
        send(behindProxy, 'POST', '/api/auth/refresh', {
          address: '127.0.0.1',
          headers: { 'X-Forwarded-For': `${client}, 127.0.0.1` },
          json: { refreshToken: 'rt_nope' },
        });
      expect(await statuses(10, () => viaProxy('192.0.2.50'))).toEqual(Array(10).fill(401));
      expect((await viaProxy('192.0.2.50')).status).toBe(429);
      expect((await viaProxy('192.0.2.51')).status).toBe(401);
    } finally {
      await proxied.close();
    }
  });

  it('the window resets after a minute', async () => {
    await statuses(11, () => refresh('203.0.113.15'));
    expect((await refresh('203.0.113.15')).status).toBe(429);
    h.clock.advance(oneMinute - 1);
    expect((await refresh('203.0.113.15')).status).toBe(429);
    h.clock.advance(1);
    expect(await statuses(10, () => refresh('203.0.113.15'))).toEqual(Array(10).fill(401));
    expect((await refresh('203.0.113.15')).status).toBe(429);
  });

  it('partner login is counted per credential: two keys have separate budgets', async () => {
    const first = await orgKey(h, acme);
    const second = await orgKey(h, acme);
    expect(await statuses(10, () => partnerLogin(first.key))).toEqual(Array(10).fill(201));
    await expectTooMany(await partnerLogin(first.key), '60');
    // Same address, another key: its own budget.
    expect((await partnerLogin(second.key)).status).toBe(201);
    // The first key from another address: still over (the key is counted, not the address).
    expect((await partnerLogin(first.key, '198.51.100.2')).status).toBe(429);
  });

  it('normal API: 100 requests per minute, per credential', async () => {
    const token = await issueToken(h.deps, acme.adminUserId, 'access');
    const call = (headers: Record<string, string>) =>
      send(app, 'GET', '/probe/rate/api', { headers, address: '198.51.100.3' });
    expect(await statuses(100, () => call({ 'X-API-Key': acme.orgKey }))).toEqual(
      Array(100).fill(200),
    );
    await expectTooMany(await call({ 'X-API-Key': acme.orgKey }), '60');
    // The access token of the same user is another credential with its own budget.
    expect((await call({ Authorization: `Bearer ${token}` })).status).toBe(200);
    // Another key of the same tenant too.
    expect((await call({ 'X-API-Key': await globalKey(h) })).status).toBe(401);
    expect((await call({ 'X-API-Key': (await orgKey(h, acme)).key })).status).toBe(200);
  });

  it('file upload: 10 requests per minute, per credential', async () => {
    const other = await orgKey(h, acme);
    const upload = (key: string) =>
      send(app, 'GET', '/probe/rate/upload', { headers: { 'X-API-Key': key } });
    expect(await statuses(10, () => upload(acme.orgKey))).toEqual(Array(10).fill(200));
    await expectTooMany(await upload(acme.orgKey), '60');
    expect((await upload(other.key)).status).toBe(200);
  });
});

describe('Failed credential attempts (brute force)', () => {
  const directory = (address: string, headers: Record<string, string>) =>
    send(app, 'GET', '/probe/directory', { address, headers });

  it('10 failed checks a minute per client address; then 429 even for a right key', async () => {
    const address = '203.0.113.20';
    for (let index = 0; index < 10; index += 1) {
      await expectUnauthorized(
        await directory(address, { 'X-API-Key': `${wrongKey.slice(0, -2)}${index}x` }),
        spec401.invalidKey,
      );
    }
    // A right guess now is not told apart from a wrong one.
    await expectTooMany(await directory(address, { 'X-API-Key': acme.orgKey }), '60');
    await expectTooMany(await directory(address, { 'X-API-Key': wrongKey }), '60');
    // Another address is not affected.
    expect((await directory('203.0.113.21', { 'X-API-Key': acme.orgKey })).status).toBe(200);
    // A minute later the address may try again.
    h.clock.advance(oneMinute);
    expect((await directory(address, { 'X-API-Key': acme.orgKey })).status).toBe(200);
  });

  it('wrong tokens count like wrong keys, on every route that authenticates', async () => {
    const address = '203.0.113.22';
    for (let index = 0; index < 5; index += 1) {
      const bad = await send(app, 'GET', '/probe/integration', {
        address,
        headers: { 'x-access-token': `not.a.token${index}` },
      });
      expect(bad.status).toBe(401);
      const badPartner = await send(app, 'POST', '/api/auth/partner-login', {
        address,
        headers: { 'x-api-key': `wrong-${index}` },
        json: { username: 'signer@partner.example' },
      });
      expect(badPartner.status).toBe(401);
    }
    const token = await issueToken(h.deps, acme.adminUserId, 'access');
    const blocked = await send(app, 'GET', '/probe/contracts', {
      address,
      headers: { Authorization: `Bearer ${token}` },
    });
    await expectTooMany(blocked, '60');
  });

  it('successful checks and requests without any credential do not count', async () => {
    const address = '203.0.113.23';
    expect(await statuses(30, () => directory(address, { 'X-API-Key': acme.orgKey }))).toEqual(
      Array(30).fill(200),
    );
    for (let index = 0; index < 30; index += 1)
      await expectUnauthorized(await directory(address, {}));
    // Nine failures still leave the tenth attempt its answer.
    for (let index = 0; index < 9; index += 1) {
      expect((await directory(address, { 'X-API-Key': wrongKey })).status).toBe(401);
    }
    expect((await directory(address, { 'X-API-Key': acme.orgKey })).status).toBe(200);
  });
});
