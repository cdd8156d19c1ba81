import { databaseEnv } from '../../../test/support/postgres';
import { issueToken } from '../../src/auth/tokens';
import { ManualClock } from '../../src/platform/clock';
import { loadConfig } from '../../src/platform/config';
import { openRuntime } from '../../src/runtime';
import { globalKey, type Harness, readJson, type SeededTenant } from '../support/harness';
import { testLogger } from '../support/testLogger';
import {
  errorOf,
  expectUnauthorized,
  legacyKey,
  oneDay,
  oneHour,
  orgKey,
  type ProbeAnswer,
  type ProbeApp,
  probeApp,
  revokeKey,
  roleWith,
  send,
  setUserStatus,
  spec401,
  superAdmin,
  tenantUser,
  twoTenants,
  wrongKey,
} from './fixtures';

let h: Harness, app: ProbeApp, acme: SeededTenant, beta: SeededTenant;
/** A member of ACME without any role, for tokens. */
let memberId: number;

beforeAll(async () => {
  ({ h, app, acme, beta } = await twoTenants());
  memberId = (await tenantUser(h, acme, { username: 'member.acme' })).id;
});
afterAll(() => h.close());

const get = (url: string, headers: Record<string, string>) => send(app, 'GET', url, { headers });
const accessToken = (userId = memberId) => issueToken(h.deps, userId, 'access');
const partnerToken = (userId = memberId) => issueToken(h.deps, userId, 'partner');

async function expectPrincipal(response: Response, expected: Partial<ProbeAnswer>) {
  expect(response.status).toBe(200);
  expect(await readJson<ProbeAnswer>(response)).toMatchObject(expected);
}

describe('Credential kinds', () => {
  it('user access token: Authorization: Bearer <ACCESS_TOKEN>, obtained by login', async () => {
    const token = await accessToken();
    await expectPrincipal(await get('/probe/contracts', { Authorization: `Bearer ${token}` }), {
      kind: 'accessToken',
      username: 'member.acme',
      tenantId: acme.tenantId,
    });
  });

  it('API key: X-API-Key: <API_KEY>, issued at onboarding', async () => {
    await expectPrincipal(await get('/probe/integration', { 'X-API-Key': acme.orgKey }), {
      kind: 'apiKey',
      keyKind: 'organization',
      tenantId: acme.tenantId,
      username: acme.adminUsername,
    });
  });

  it('partner access token: x-access-token, raw JWT with no Bearer prefix', async () => {
    const token = await partnerToken();
    await expectPrincipal(await get('/probe/integration', { 'x-access-token': token }), {
      kind: 'partnerToken',
      username: 'member.acme',
    });
  });
});

describe('Which credentials each area accepts', () => {
  it('Contract API, signing API: Authorization: Bearer token or X-API-Key', async () => {
    await expectPrincipal(
      await get('/probe/contracts', { Authorization: `Bearer ${await accessToken()}` }),
      { kind: 'accessToken' },
    );
    await expectPrincipal(await get('/probe/contracts', { 'X-API-Key': acme.orgKey }), {
      kind: 'apiKey',
    });
    // The partner token is not read here, even in its own header.
    await expectUnauthorized(
      await get('/probe/contracts', { 'x-access-token': await partnerToken() }),
    );
  });

  it('Integration API (dossiers, files, tasks, history): X-API-Key or x-access-token', async () => {
    await expectPrincipal(await get('/probe/integration', { 'X-API-Key': acme.orgKey }), {
      kind: 'apiKey',
    });
    await expectPrincipal(
      await get('/probe/integration', { 'x-access-token': await partnerToken() }),
      { kind: 'partnerToken' },
    );
    await expectUnauthorized(
      await get('/probe/integration', { Authorization: `Bearer ${await accessToken()}` }),
    );
  });

  it('Integration API, directory (organizations, roles, users): X-API-Key only', async () => {
    await expectPrincipal(await get('/probe/directory', { 'X-API-Key': acme.orgKey }), {
      kind: 'apiKey',
      keyKind: 'organization',
    });
    await expectPrincipal(await get('/probe/directory', { 'X-API-Key': await globalKey(h) }), {
      kind: 'apiKey',
      keyKind: 'global',
      username: null,
    });
    await expectUnauthorized(
      await get('/probe/directory', { Authorization: `Bearer ${await accessToken()}` }),
    );
    await expectUnauthorized(
      await get('/probe/directory', { 'x-access-token': await partnerToken() }),
    );
  });

  it('Integration webhook test: X-API-Key of an organization-bound key only', async () => {
    await expectPrincipal(await get('/probe/webhookTest', { 'X-API-Key': acme.orgKey }), {
      kind: 'apiKey',
      keyKind: 'organization',
      username: acme.adminUsername,
    });
    // Document 1: "Webhook test: 403 with an access token, 400 for a global key". The 400 is the
    // route's; authentication lets the global key through so the route can say why.
    await expectPrincipal(await get('/probe/webhookTest', { 'X-API-Key': await globalKey(h) }), {
      kind: 'apiKey',
      keyKind: 'global',
    });
    const tokenHeaders: Record<string, string>[] = [
      { Authorization: `Bearer ${await accessToken()}` },
      { 'x-access-token': await partnerToken() },
    ];
    for (const headers of tokenHeaders) {
      const response = await get('/probe/webhookTest', headers);
      expect(response.status).toBe(403);
      expect(await errorOf(response)).toMatchObject({ statusCode: 403, code: 'FORBIDDEN' });
    }
    // A token that is not valid is still no credential at all.
    await expectUnauthorized(
      await get('/probe/webhookTest', { Authorization: 'Bearer not-a-token' }),
    );
    const unbound = await orgKey(h, acme, { userId: null });
    await expectUnauthorized(
      await get('/probe/webhookTest', { 'X-API-Key': unbound.key }),
      spec401.keyWithoutUser,
    );
  });

  it('Partner login: x-api-key header only (never the body)', async () => {
    await expectPrincipal(await get('/probe/partnerLogin', { 'x-api-key': acme.orgKey }), {
      kind: 'apiKey',
    });
    await expectUnauthorized(
      await get('/probe/partnerLogin', { Authorization: `Bearer ${await accessToken()}` }),
    );
    await expectUnauthorized(
      await get('/probe/partnerLogin', { 'x-access-token': await partnerToken() }),
    );
    const viaBody = await send(app, 'POST', '/api/auth/partner-login', {
      json: { username: 'member.acme', apiKey: acme.orgKey, 'x-api-key': acme.orgKey },
    });
    await expectUnauthorized(viaBody);
  });
});

describe('API key types', () => {
  it('organization key: bound to one organization and to a user, who is the actor', async () => {
    for (const area of ['contracts', 'integration', 'directory', 'webhookTest', 'partnerLogin']) {
      await expectPrincipal(await get(`/probe/${area}`, { 'X-API-Key': beta.orgKey }), {
        kind: 'apiKey',
        keyKind: 'organization',
        tenantId: beta.tenantId,
        username: beta.adminUsername,
      });
    }
  });

  it('organization key: must be bound to a user (else "API key chưa gắn người dùng")', async () => {
    const unbound = await orgKey(h, acme, { userId: null });
    for (const area of ['contracts', 'integration', 'directory', 'webhookTest', 'partnerLogin']) {
      await expectUnauthorized(
        await get(`/probe/${area}`, { 'X-API-Key': unbound.key }),
        spec401.keyWithoutUser,
      );
    }
  });

  it('global key: partner login and directory endpoints, bound to no organization', async () => {
    const key = await globalKey(h);
    for (const area of ['directory', 'partnerLogin']) {
      await expectPrincipal(await get(`/probe/${area}`, { 'X-API-Key': key }), {
        kind: 'apiKey',
        keyKind: 'global',
        tenantId: null,
      });
    }
  });

  it('global key where an organization key is needed gets "API key chưa gắn người dùng"', async () => {
    const unbound = await globalKey(h);
    const bound = await globalKey(h, acme.adminUserId);
    for (const key of [unbound, bound]) {
      for (const area of ['contracts', 'integration']) {
        await expectUnauthorized(
          await get(`/probe/${area}`, { 'X-API-Key': key }),
          spec401.keyWithoutUser,
        );
      }
    }
  });
});

describe('API key rules', () => {
  it('1. the header name is X-API-Key, case-insensitive', async () => {
    for (const name of ['X-API-Key', 'x-api-key', 'X-API-KEY', 'x-Api-kEY']) {
      await expectPrincipal(await get('/probe/integration', { [name]: acme.orgKey }), {
        kind: 'apiKey',
        username: acme.adminUsername,
      });
    }
  });

  it('1. the former name apikey is not read: 401 from the token layer, not an API-key error', async () => {
    for (const area of ['contracts', 'integration', 'directory', 'partnerLogin']) {
      await expectUnauthorized(await get(`/probe/${area}`, { apikey: acme.orgKey }));
    }
    // Not even when the key sent there is a legacy one or a wrong one.
    const legacy = await legacyKey(h, acme, 'legacy-plaintext-rule-1');
    await expectUnauthorized(await get('/probe/integration', { apikey: legacy }));
    await expectUnauthorized(await get('/probe/integration', { apikey: 'wrong' }));
    const real = await send(app, 'POST', '/api/auth/partner-login', {
      headers: { apikey: acme.orgKey },
      json: { username: 'member.acme' },
    });
    await expectUnauthorized(real);
  });

  it('2. when both an API key and an access token are sent, the key is used', async () => {
    await expectPrincipal(
      await get('/probe/contracts', {
        'X-API-Key': beta.orgKey,
        Authorization: `Bearer ${await accessToken()}`,
      }),
      { kind: 'apiKey', tenantId: beta.tenantId, username: beta.adminUsername },
    );
    await expectPrincipal(
      await get('/probe/integration', {
        'X-API-Key': beta.orgKey,
        'x-access-token': await partnerToken(),
      }),
      { kind: 'apiKey', username: beta.adminUsername },
    );
  });

  it('2. ... and the token is ignored, even when the key is wrong', async () => {
    await expectUnauthorized(
      await get('/probe/integration', {
        'X-API-Key': wrongKey,
        'x-access-token': await partnerToken(),
      }),
      spec401.invalidKey,
    );
  });

  it('3. the layer checks only signature and expiry of a token: 401 wrong credential', async () => {
    const token = await accessToken();
    const [header, payload, signature] = token.split('.');
    const flipped = `${signature!.slice(0, -2)}${signature!.endsWith('AA') ? 'BB' : 'AA'}`;
    await expectUnauthorized(
      await get('/probe/contracts', { Authorization: `Bearer ${header}.${payload}.${flipped}` }),
    );
    // A payload naming another user under the old signature is refused too.
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), sub: '1' }),
    ).toString('base64url');
    await expectUnauthorized(
      await get('/probe/contracts', { Authorization: `Bearer ${header}.${forged}.${signature}` }),
    );
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
    await expectUnauthorized(await get('/probe/contracts', { Authorization: `Bearer ${none}` }));
  });

  it('3. 403 means missing permission; 404 means data outside the caller scope', async () => {
    const viewer = await tenantUser(
      h,
      acme,
      { username: 'viewer.acme' },
      await roleWith(h, acme, 'Viewer', ['user:view']),
    );
    // Authenticated (the same key passes an unguarded route) but without user:manage.
    const viewerKey = await globalKey(h, viewer.id);
    await expectPrincipal(await get('/probe/directory', { 'X-API-Key': viewerKey }), {
      username: 'viewer.acme',
    });
    const forbidden = await get('/probe/guarded', { 'X-API-Key': viewerKey });
    expect(forbidden.status).toBe(403);
    expect((await errorOf(forbidden)).message).toBe('Forbidden: insufficient permissions');
    // A member of BETA asked for with ACME's key: outside the scope, so 404.
    await tenantUser(h, beta, { username: 'member.beta' });
    const outside = await send(app, 'POST', '/api/auth/partner-login', {
      headers: { 'x-api-key': acme.orgKey },
      json: { username: 'member.beta' },
    });
    expect(outside.status).toBe(404);
  });

  it('4. a token sent in the wrong header is treated as absent: 401 without description', async () => {
    // Access token in x-access-token (integration reads only that token header).
    await expectUnauthorized(
      await get('/probe/integration', { 'x-access-token': await accessToken() }),
    );
    // Partner token in Authorization (contracts read only that token header).
    await expectUnauthorized(
      await get('/probe/contracts', { Authorization: `Bearer ${await partnerToken()}` }),
    );
  });

  it('4. ... or with a Bearer prefix in x-access-token', async () => {
    const token = await partnerToken();
    for (const value of [`Bearer ${token}`, `bearer ${token}`, `BEARER ${token}`]) {
      await expectUnauthorized(await get('/probe/integration', { 'x-access-token': value }));
    }
    // The same token without the prefix works, so the prefix alone made the difference.
    await expectPrincipal(await get('/probe/integration', { 'x-access-token': token }), {
      kind: 'partnerToken',
    });
  });

  it('5. a token of the development environment is not valid in production and the reverse', async () => {
    const production = openRuntime(
      loadConfig({
        DATA_DIR: h.dataDir,
        // On PostgreSQL, the harness's database and master secret (on SQLite both are in DATA_DIR).
        ...databaseEnv(h.dataDir),
        APP_ENV: 'production',
        TSA_URL: 'https://tsa.example',
        PUBLIC_URL: 'http://127.0.0.1:3000',
        RATE_LIMIT_AUTH: '100000',
        RATE_LIMIT_API: '100000',
      }),
      { logger: testLogger(), clock: h.clock },
    );
    try {
      expect(production.deps.config.environment).toBe('production');
      const prodApp = probeApp(production.deps);
      const devAccess = await accessToken();
      const devPartner = await partnerToken();
      const prodAccess = await issueToken(production.deps, memberId, 'access');
      const prodPartner = await issueToken(production.deps, memberId, 'partner');
      // Each environment accepts its own tokens...
      await expectPrincipal(
        await send(prodApp, 'GET', '/probe/contracts', {
          headers: { Authorization: `Bearer ${prodAccess}` },
        }),
        { kind: 'accessToken', username: 'member.acme' },
      );
      await expectPrincipal(await get('/probe/integration', { 'x-access-token': devPartner }), {
        kind: 'partnerToken',
      });
      // ...and refuses the other's.
      await expectUnauthorized(
        await send(prodApp, 'GET', '/probe/contracts', {
          headers: { Authorization: `Bearer ${devAccess}` },
        }),
      );
      await expectUnauthorized(
        await send(prodApp, 'GET', '/probe/integration', {
          headers: { 'x-access-token': devPartner },
        }),
      );
      await expectUnauthorized(
        await get('/probe/contracts', { Authorization: `Bearer ${prodAccess}` }),
      );
      await expectUnauthorized(await get('/probe/integration', { 'x-access-token': prodPartner }));
      // API keys are data, not signed: the same key works in both (same data directory).
      await expectPrincipal(
        await send(prodApp, 'GET', '/probe/integration', {
          headers: { 'X-API-Key': acme.orgKey },
        }),
        { kind: 'apiKey', username: acme.adminUsername },
      );
    } finally {
      await production.database.close();
    }
  });

  it('5. ... also with a JWT_SECRET override shared by both environments', async () => {
    const shared = (environment: string) =>
      openRuntime(
        loadConfig({
          DATA_DIR: h.dataDir,
          ...databaseEnv(h.dataDir),
          APP_ENV: environment,
          TSA_URL: 'https://tsa.example',
          JWT_SECRET: 'one-secret-for-every-environment',
          // The failed-check budget lives in the shared database, already spent by the tests above.
          RATE_LIMIT_AUTH: '100000',
        }),
        { logger: testLogger(), clock: new ManualClock(h.now()) },
      );
    const dev = shared('development');
    const prod = shared('production');
    try {
      const token = await issueToken(dev.deps, memberId, 'access');
      await expectPrincipal(
        await send(probeApp(dev.deps), 'GET', '/probe/contracts', {
          headers: { Authorization: `Bearer ${token}` },
        }),
        { kind: 'accessToken' },
      );
      await expectUnauthorized(
        await send(probeApp(prod.deps), 'GET', '/probe/contracts', {
          headers: { Authorization: `Bearer ${token}` },
        }),
      );
    } finally {
      await dev.database.close();
      await prod.database.close();
    }
  });

  it('6. API keys of the old plaintext kind are rejected with 401 API_KEY_LEGACY_NOT_SUPPORTED', async () => {
    const legacy = await legacyKey(h, acme, 'acme-plaintext-key-2019');
    for (const area of ['contracts', 'integration', 'directory', 'webhookTest', 'partnerLogin']) {
      const response = await get(`/probe/${area}`, { 'X-API-Key': legacy });
      expect(response.status).toBe(401);
      expect(await errorOf(response)).toMatchObject({
        statusCode: 401,
        error: 'Unauthorized',
        code: 'API_KEY_LEGACY_NOT_SUPPORTED',
      });
    }
    const partner = await send(app, 'POST', '/api/auth/partner-login', {
      headers: { 'x-api-key': legacy },
      json: { username: 'member.acme' },
    });
    expect(partner.status).toBe(401);
    expect((await errorOf(partner)).code).toBe('API_KEY_LEGACY_NOT_SUPPORTED');
    const server = await send(app, 'POST', '/api/auth/login-server', {
      json: { secretKey: legacy, cccd: '001099000001' },
    });
    expect(server.status).toBe(401);
    expect((await errorOf(server)).code).toBe('API_KEY_LEGACY_NOT_SUPPORTED');
  });

  it('7. a key bound to a system super-administrator acts system-wide', async () => {
    const root = await superAdmin(h, 'root.rule7');
    const rootKey = await globalKey(h, root.id);
    await tenantUser(h, beta, { username: 'citizen.beta', identityNumber: '079200000777' });
    // login-server exchanges it for a token of a user of any tenant, without a password.
    const session = await send(app, 'POST', '/api/auth/login-server', {
      json: { secretKey: rootKey, cccd: '079200000777' },
    });
    expect(session.status).toBe(200);
    const { data } = await readJson<{ data: { accessToken: string } }>(session);
    await expectPrincipal(
      await get('/probe/contracts', { Authorization: `Bearer ${data.accessToken}` }),
      {
        username: 'citizen.beta',
        tenantId: beta.tenantId,
      },
    );
    // The key of a tenant administrator stays in its tenant.
    const scoped = await send(app, 'POST', '/api/auth/login-server', {
      json: { secretKey: acme.orgKey, cccd: '079200000777' },
    });
    expect(scoped.status).toBe(404);
    // And directory/partner login accept it for any tenantCode.
    await expectPrincipal(await get('/probe/directory', { 'X-API-Key': rootKey }), {
      keyKind: 'global',
      username: 'root.rule7',
      tenantId: null,
    });
  });

  it('8. revoked and expired keys produce the same error as a wrong key', async () => {
    const wrongBodies = [];
    for (const wrong of [
      wrongKey,
      `${acme.orgKey.slice(0, -1)}${acme.orgKey.endsWith('A') ? 'B' : 'A'}`,
      'not-a-key-at-all',
      'esk_',
      'x'.repeat(2000),
    ]) {
      const response = await get('/probe/integration', { 'X-API-Key': wrong });
      expect(response.status).toBe(401);
      wrongBodies.push(await errorOf(response));
    }
    const expected = {
      statusCode: 401,
      message: spec401.invalidKey,
      error: 'Unauthorized',
      code: 'UNAUTHORIZED',
    };
    for (const body of wrongBodies) expect(body).toEqual(expected);

    const revoked = await orgKey(h, acme);
    await expectPrincipal(await get('/probe/integration', { 'X-API-Key': revoked.key }), {
      kind: 'apiKey',
    });
    await revokeKey(h, revoked.id);
    const afterRevoke = await get('/probe/integration', { 'X-API-Key': revoked.key });
    expect(afterRevoke.status).toBe(401);
    expect(await errorOf(afterRevoke)).toEqual(expected);

    const expiresAt = new Date(h.clock.now().getTime() + oneDay).toISOString();
    const expiring = await orgKey(h, acme, { expiresAt });
    h.clock.advance(oneDay - 1000);
    await expectPrincipal(await get('/probe/integration', { 'X-API-Key': expiring.key }), {
      kind: 'apiKey',
    });
    h.clock.advance(1000);
    const afterExpiry = await get('/probe/integration', { 'X-API-Key': expiring.key });
    expect(afterExpiry.status).toBe(401);
    expect(await errorOf(afterExpiry)).toEqual(expected);
  });
});

describe('Authentication errors (401, code UNAUTHORIZED, cause in message)', () => {
  it('"API key không hợp lệ": wrong, unknown, badly formed, revoked or expired key', async () => {
    for (const area of ['contracts', 'integration', 'directory', 'webhookTest', 'partnerLogin']) {
      await expectUnauthorized(
        await get(`/probe/${area}`, { 'X-API-Key': 'bad key' }),
        spec401.invalidKey,
      );
    }
  });

  it('"API key chưa gắn người dùng": global key used, or organization key without bound user', async () => {
    const unbound = await orgKey(h, beta, { userId: null });
    await expectUnauthorized(
      await get('/probe/integration', { 'X-API-Key': unbound.key }),
      spec401.keyWithoutUser,
    );
    await expectUnauthorized(
      await get('/probe/contracts', { 'X-API-Key': await globalKey(h) }),
      spec401.keyWithoutUser,
    );
  });

  it('"Tài khoản dịch vụ không hoạt động": user bound to the key is deactivated', async () => {
    const service = await tenantUser(h, beta, { username: 'service.beta' });
    const key = await orgKey(h, beta, { userId: service.id });
    const global = await globalKey(h, service.id);
    await expectPrincipal(await get('/probe/integration', { 'X-API-Key': key.key }), {
      username: 'service.beta',
    });
    await setUserStatus(h, service.id, 3);
    for (const area of ['contracts', 'integration', 'directory', 'webhookTest', 'partnerLogin']) {
      await expectUnauthorized(
        await get(`/probe/${area}`, { 'X-API-Key': key.key }),
        spec401.inactiveServiceAccount,
      );
    }
    await expectUnauthorized(
      await get('/probe/directory', { 'X-API-Key': global }),
      spec401.inactiveServiceAccount,
    );
    // Unlocking brings the key back.
    await setUserStatus(h, service.id, 2);
    await expectPrincipal(await get('/probe/integration', { 'X-API-Key': key.key }), {
      username: 'service.beta',
    });
  });

  it('an access token of a locked user gives 401; expired tokens give 401', async () => {
    const user = await tenantUser(h, beta, { username: 'leaver.beta' });
    const access = await issueToken(h.deps, user.id, 'access');
    await expectPrincipal(await get('/probe/contracts', { Authorization: `Bearer ${access}` }), {
      username: 'leaver.beta',
    });
    await setUserStatus(h, user.id, 3);
    await expectUnauthorized(await get('/probe/contracts', { Authorization: `Bearer ${access}` }));
    await setUserStatus(h, user.id, 2);
    h.clock.advance(oneHour);
    await expectUnauthorized(await get('/probe/contracts', { Authorization: `Bearer ${access}` }));
  });
});
