import { hashPassword } from '../../src/platform/passwords';
import { globalKey, type Harness, readJson, type SeededTenant } from '../support/harness';
import {
  errorOf,
  expectUnauthorized,
  legacyKey,
  legacyUser,
  oneDay,
  oneHour,
  orgKey,
  type ProbeApp,
  revokeKey,
  send,
  setUserStatus,
  spec401,
  superAdmin,
  tenantUser,
  twoTenants,
  wrongKey,
} from './fixtures';

interface SessionBody {
  statusCode: number;
  data: { accessToken: string; refreshToken: string; expiresIn: number };
  timestamp: string;
}

let h: Harness, app: ProbeApp, acme: SeededTenant, beta: SeededTenant;
const password = 'correct horse battery staple';

beforeAll(async () => {
  ({ h, app, acme, beta } = await twoTenants({ adminPassword: password }));
});
afterAll(() => h.close());

const post = (url: string, json: unknown, headers: Record<string, string> = {}) =>
  send(app, 'POST', url, { json, headers });

async function session(response: Response): Promise<SessionBody['data']> {
  expect(response.status).toBe(200);
  const body = await readJson<SessionBody>(response);
  expect(body.statusCode).toBe(200);
  expect(body.timestamp).toBe(h.now());
  expect(Object.keys(body.data).sort()).toEqual(['accessToken', 'expiresIn', 'refreshToken']);
  expect(body.data.expiresIn).toBe(3600);
  expect(body.data.accessToken.split('.')).toHaveLength(3);
  expect(body.data.refreshToken).toMatch(/^rt_[A-Za-z0-9_-]{43}$/);
  return body.data;
}

/** Who the access token authenticates as on the contract API (Authorization: Bearer). */
async function whoIs(accessToken: string): Promise<string | number> {
  const response = await send(app, 'GET', '/probe/contracts', {
    headers: { Authorization: `Bearer ${accessToken}` },
  });
  if (response.status !== 200) return response.status;
  return (await readJson<{ username: string }>(response)).username;
}

describe('Login (general API)', () => {
  it('username: e-mail or login name, compared case-insensitively', async () => {
    for (const username of [
      'admin.acme',
      'ADMIN.Acme',
      '  admin.acme  ',
      'admin.acme@example.com',
      'Admin.ACME@EXAMPLE.COM',
    ]) {
      const data = await session(await post('/api/auth/login', { username, password }));
      expect(await whoIs(data.accessToken)).toBe('admin.acme');
    }
  });

  it('wrong password and unknown user give the same 401', async () => {
    const wrongPassword = await post('/api/auth/login', {
      username: 'admin.acme',
      password: 'wrong',
    });
    const unknownUser = await post('/api/auth/login', { username: 'nobody', password });
    const noPasswordSet = await post('/api/auth/login', { username: 'admin.beta', password });
    const bodies = [];
    for (const response of [wrongPassword, unknownUser, noPasswordSet]) {
      expect(response.status).toBe(401);
      bodies.push(await errorOf(response));
    }
    expect(bodies[0]).toEqual({
      statusCode: 401,
      message: 'Invalid username or password',
      error: 'Unauthorized',
      code: 'UNAUTHORIZED',
    });
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[2]).toEqual(bodies[0]);
  });

  it('a locked user cannot log in (403 with the right password, 401 with a wrong one)', async () => {
    const user = await tenantUser(h, acme, {
      username: 'locked.acme',
      status: 3,
      passwordHash: await hashPassword(password),
    });
    const right = await post('/api/auth/login', { username: 'locked.acme', password });
    expect(right.status).toBe(403);
    expect(await errorOf(right)).toMatchObject({ statusCode: 403, code: 'ACCOUNT_INACTIVE' });
    const wrong = await post('/api/auth/login', { username: 'locked.acme', password: 'nope' });
    expect(wrong.status).toBe(401);
    await setUserStatus(h, user.id, 2);
    await session(await post('/api/auth/login', { username: 'locked.acme', password }));
  });

  it('access token lifetime: 1 hour; on expiry the API returns 401', async () => {
    const data = await session(await post('/api/auth/login', { username: 'admin.acme', password }));
    h.clock.advance(oneHour - 1000);
    expect(await whoIs(data.accessToken)).toBe('admin.acme');
    h.clock.advance(1000);
    expect(await whoIs(data.accessToken)).toBe(401);
  });

  it('a login name that is another user e-mail: the password decides who signs in', async () => {
    const other = await hashPassword('other password');
    // User 1's e-mail is the login name of user 2. New accounts cannot clash like that, but
    // legacy rows can (each column is unique only on its own), so user 2 is inserted directly.
    await tenantUser(h, beta, {
      username: 'first.beta',
      email: 'shared.name@example.com',
      passwordHash: await hashPassword(password),
    });
    await legacyUser(h, {
      tenantId: beta.tenantId,
      organizationId: beta.rootOrganizationId,
      code: null,
      username: 'shared.name@example.com',
      email: 'second@example.com',
      status: 2,
      type: 'internal',
      passwordHash: other,
    });
    const first = await session(
      await post('/api/auth/login', { username: 'shared.name@example.com', password }),
    );
    expect(await whoIs(first.accessToken)).toBe('first.beta');
    const second = await session(
      await post('/api/auth/login', {
        username: 'shared.name@example.com',
        password: 'other password',
      }),
    );
    expect(await whoIs(second.accessToken)).toBe('shared.name@example.com');
  });

  it('username and password are required (400, details.field)', async () => {
    const response = await post('/api/auth/login', { username: 'admin.acme' });
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toMatchObject({
      statusCode: 400,
      error: 'Bad Request',
      code: 'VALIDATION_ERROR',
      details: { field: 'password' },
    });
  });
});

describe('Refresh (POST /api/auth/refresh)', () => {
  async function login() {
    return session(await post('/api/auth/login', { username: 'admin.acme', password }));
  }
  const refresh = (refreshToken: string) => post('/api/auth/refresh', { refreshToken });

  it('returns a new accessToken and refreshToken (rotation)', async () => {
    const first = await login();
    h.clock.advance(1000);
    const second = await session(await refresh(first.refreshToken));
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect(second.accessToken).not.toBe(first.accessToken);
    expect(await whoIs(second.accessToken)).toBe('admin.acme');
  });

  it('a refresh token works once: after use the old one is invalidated', async () => {
    const first = await login();
    await session(await refresh(first.refreshToken));
    const again = await refresh(first.refreshToken);
    expect(again.status).toBe(401);
    expect(await errorOf(again)).toMatchObject({ statusCode: 401, code: 'UNAUTHORIZED' });
  });

  it('reuse of a spent token revokes the whole family: the successor stops working too', async () => {
    const first = await login();
    const second = await session(await refresh(first.refreshToken));
    expect((await refresh(first.refreshToken)).status).toBe(401);
    expect((await refresh(second.refreshToken)).status).toBe(401);
    // Another login (another family) is not affected.
    const other = await login();
    await session(await refresh(other.refreshToken));
  });

  it('a refresh token lives 7 days', async () => {
    const early = await login();
    const late = await login();
    h.clock.advance(7 * oneDay - 1000);
    await session(await refresh(early.refreshToken));
    h.clock.advance(1000);
    expect((await refresh(late.refreshToken)).status).toBe(401);
  });

  it('unknown or malformed refresh tokens and access tokens given as refresh tokens get 401', async () => {
    const data = await login();
    for (const token of ['rt_unknown', 'garbage', data.accessToken]) {
      expect((await refresh(token)).status).toBe(401);
    }
    // None of those attempts spent the real one.
    await session(await refresh(data.refreshToken));
  });

  it('a locked user cannot refresh', async () => {
    const user = await tenantUser(h, acme, {
      username: 'refresher.acme',
      passwordHash: await hashPassword(password),
    });
    const data = await session(
      await post('/api/auth/login', { username: 'refresher.acme', password }),
    );
    await setUserStatus(h, user.id, 3);
    expect((await refresh(data.refreshToken)).status).toBe(401);
  });
});

describe('Login-server (POST /api/auth/login-server)', () => {
  let citizenId: number;
  beforeAll(async () => {
    citizenId = (
      await tenantUser(h, acme, { username: 'citizen.acme', identityNumber: '001090000001' })
    ).id;
    await tenantUser(h, beta, { username: 'citizen.beta', identityNumber: '001090000002' });
  });

  it('secretKey (a key bound to a user) + cccd: the same data as login, without a password', async () => {
    const data = await session(
      await post('/api/auth/login-server', { secretKey: acme.orgKey, cccd: '001090000001' }),
    );
    expect(await whoIs(data.accessToken)).toBe('citizen.acme');
    // Its refresh token works like the one of login.
    const next = await session(
      await post('/api/auth/refresh', { refreshToken: data.refreshToken }),
    );
    expect(await whoIs(next.accessToken)).toBe('citizen.acme');
  });

  it('the scope is the key tenant: a citizen of another tenant is 404', async () => {
    const response = await post('/api/auth/login-server', {
      secretKey: acme.orgKey,
      cccd: '001090000002',
    });
    expect(response.status).toBe(404);
    expect(await errorOf(response)).toMatchObject({ statusCode: 404, details: { field: 'cccd' } });
  });

  it('a global key bound to a tenant user is scoped to that user tenant', async () => {
    const key = await globalKey(h, beta.adminUserId);
    const data = await session(
      await post('/api/auth/login-server', { secretKey: key, cccd: '001090000002' }),
    );
    expect(await whoIs(data.accessToken)).toBe('citizen.beta');
    const other = await post('/api/auth/login-server', { secretKey: key, cccd: '001090000001' });
    expect(other.status).toBe(404);
  });

  it('rule 7: a key bound to a super-administrator is system-wide', async () => {
    const root = await superAdmin(h, 'root.login-server');
    const key = await globalKey(h, root.id);
    for (const [cccd, username] of [
      ['001090000001', 'citizen.acme'],
      ['001090000002', 'citizen.beta'],
    ] as const) {
      const data = await session(await post('/api/auth/login-server', { secretKey: key, cccd }));
      expect(await whoIs(data.accessToken)).toBe(username);
    }
  });

  it('a cccd shared by several users in scope gives 400 USER_AMBIGUOUS', async () => {
    await tenantUser(h, beta, { username: 'twin.one', identityNumber: '001090000555' });
    await tenantUser(h, beta, { username: 'twin.two', identityNumber: '001090000555' });
    const response = await post('/api/auth/login-server', {
      secretKey: beta.orgKey,
      cccd: '001090000555',
    });
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toMatchObject({
      code: 'USER_AMBIGUOUS',
      details: { field: 'cccd' },
    });
  });

  it('unknown cccd gives 404', async () => {
    const response = await post('/api/auth/login-server', {
      secretKey: acme.orgKey,
      cccd: '999999999999',
    });
    expect(response.status).toBe(404);
  });

  it('invalid, revoked, legacy and unbound keys give the 401 of the spec table', async () => {
    const cases: [string, string][] = [];
    cases.push([wrongKey, spec401.invalidKey]);
    const revoked = await orgKey(h, acme);
    await revokeKey(h, revoked.id);
    cases.push([revoked.key, spec401.invalidKey]);
    cases.push([await globalKey(h), spec401.keyWithoutUser]);
    cases.push([(await orgKey(h, acme, { userId: null })).key, spec401.keyWithoutUser]);
    for (const [secretKey, message] of cases) {
      await expectUnauthorized(
        await post('/api/auth/login-server', { secretKey, cccd: '001090000001' }),
        message,
      );
    }
    const legacy = await post('/api/auth/login-server', {
      secretKey: await legacyKey(h, acme, 'acme-login-server-legacy'),
      cccd: '001090000001',
    });
    expect(legacy.status).toBe(401);
    expect((await errorOf(legacy)).code).toBe('API_KEY_LEGACY_NOT_SUPPORTED');
  });

  it('a key whose bound user is locked gives "Tài khoản dịch vụ không hoạt động"', async () => {
    const service = await tenantUser(h, acme, { username: 'service.login-server' });
    const key = await orgKey(h, acme, { userId: service.id });
    await setUserStatus(h, service.id, 3);
    await expectUnauthorized(
      await post('/api/auth/login-server', { secretKey: key.key, cccd: '001090000001' }),
      spec401.inactiveServiceAccount,
    );
  });

  it('a locked citizen gets no session', async () => {
    await setUserStatus(h, citizenId, 3);
    const response = await post('/api/auth/login-server', {
      secretKey: acme.orgKey,
      cccd: '001090000001',
    });
    expect(response.status).toBe(403);
    await setUserStatus(h, citizenId, 2);
  });

  it('the key is read from the body only: an X-API-Key header does not replace secretKey', async () => {
    const response = await post(
      '/api/auth/login-server',
      { cccd: '001090000001' },
      { 'X-API-Key': acme.orgKey },
    );
    expect(response.status).toBe(400);
    expect((await errorOf(response)).details).toEqual({ field: 'secretKey', code: 'INVALID_TYPE' });
  });
});
