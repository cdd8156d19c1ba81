import { issueToken } from '../../src/auth/tokens';
import { globalKey, type Harness, readJson, type SeededTenant } from '../support/harness';
import {
  errorOf,
  expectUnauthorized,
  legacyUser,
  oneDay,
  orgKey,
  type ProbeApp,
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

interface PartnerLoginBody {
  statusCode: number;
  timestamp: string;
  data: {
    accessToken: string;
    userInfo: Record<string, unknown>;
    permission: string[];
  };
}

let h: Harness, app: ProbeApp, acme: SeededTenant, beta: SeededTenant;
let externalId: number;

beforeAll(async () => {
  ({ h, app, acme, beta } = await twoTenants());
  externalId = (
    await tenantUser(h, acme, {
      username: 'signer@partner.example',
      email: 'signer@partner.example',
      name: 'Nguyễn Văn Ký',
      phone: '0901234567',
      identityNumber: '001090000123',
      address: '1 Tràng Tiền, Hà Nội',
      organizationId: null,
      type: 'external',
      status: 1,
    })
  ).id;
  await tenantUser(h, beta, { username: 'member.beta' });
});
afterAll(() => h.close());

const partnerLogin = (apiKey: string | null, json: Record<string, unknown>) =>
  send(app, 'POST', '/api/auth/partner-login', {
    json,
    headers: apiKey === null ? {} : { 'x-api-key': apiKey },
  });

async function expectError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  const body = await errorOf(response);
  expect(body).toMatchObject({ statusCode: status, code });
  return body;
}

/** Who the partner token authenticates as on the integration API (x-access-token). */
async function whoIs(token: string): Promise<string | number> {
  const response = await send(app, 'GET', '/probe/integration', {
    headers: { 'x-access-token': token },
  });
  if (response.status !== 200) return response.status;
  return (await readJson<{ username: string }>(response)).username;
}

describe('Partner login', () => {
  it('response: HTTP 201, envelope body with statusCode 200', async () => {
    const response = await partnerLogin(acme.orgKey, { username: 'signer@partner.example' });
    expect(response.status).toBe(201);
    const body = await readJson<PartnerLoginBody>(response);
    expect(body.statusCode).toBe(200);
    expect(body.timestamp).toBe(h.now());
    expect(Object.keys(body.data).sort()).toEqual(['accessToken', 'permission', 'userInfo']);
  });

  it('data: accessToken, userInfo (organizationId -1 for external users), permission array', async () => {
    const response = await partnerLogin(acme.orgKey, { username: 'SIGNER@partner.example' });
    const { data } = await readJson<PartnerLoginBody>(response);
    expect(data.userInfo).toEqual({
      id: externalId,
      username: 'signer@partner.example',
      name: 'Nguyễn Văn Ký',
      email: 'signer@partner.example',
      phone: '0901234567',
      identityNumber: '001090000123',
      organizationId: -1,
      status: 1,
      type: 'external',
      address: '1 Tràng Tiền, Hà Nội',
      avatar: null,
      memberOf: [],
      updatedAt: '2026-11-25T08:00:00.000Z',
      defaultSignature: null,
      imageSignatures: [],
      backgroundSignatures: [],
    });
    expect(data.permission).toEqual([]);
    expect(await whoIs(data.accessToken)).toBe('signer@partner.example');
  });

  it('internal users get their organization id, memberships and permissions', async () => {
    const roleId = await roleWith(h, acme, 'Signer', ['task:view', 'document:view']);
    const internal = await tenantUser(h, acme, { username: 'clerk.acme' }, roleId);
    const { data } = await readJson<PartnerLoginBody>(
      await partnerLogin(acme.orgKey, { username: 'clerk.acme' }),
    );
    expect(data.userInfo).toMatchObject({
      id: internal.id,
      organizationId: acme.rootOrganizationId,
      status: 2,
      type: 'internal',
      memberOf: [
        {
          organizationCode: 'ACME',
          organizationName: 'Tenant ACME',
          roleCode: 'SIGNER',
          roleName: 'Signer',
        },
      ],
    });
    expect(data.permission).toEqual(['document:view', 'task:view']);
  });

  it('there is no refreshToken and no expiresIn', async () => {
    const response = await partnerLogin(acme.orgKey, { username: 'signer@partner.example' });
    const { data } = await readJson<PartnerLoginBody>(response);
    expect(data).not.toHaveProperty('refreshToken');
    expect(data).not.toHaveProperty('expiresIn');
  });

  it('rule 1: the endpoint never creates users: unknown username gives 404', async () => {
    const before = await h.deps.db.selectFrom('users').select('id').execute();
    await expectError(
      await partnerLogin(acme.orgKey, { username: 'new.person@partner.example' }),
      404,
      'USER_NOT_FOUND',
    );
    expect(await h.deps.db.selectFrom('users').select('id').execute()).toHaveLength(before.length);
  });

  it('rule 2: only members of the resolved tenant get tokens: a user of another tenant is 404', async () => {
    await expectError(
      await partnerLogin(acme.orgKey, { username: 'member.beta' }),
      404,
      'USER_NOT_FOUND',
    );
    await expectError(
      await partnerLogin(await globalKey(h), { username: 'member.beta', tenantCode: 'ACME' }),
      404,
      'USER_NOT_FOUND',
    );
  });

  it('rule 2: a system super-administrator gets 403', async () => {
    await superAdmin(h, 'root.partner');
    for (const key of [acme.orgKey, await globalKey(h)]) {
      await expectError(
        await partnerLogin(key, { username: 'root.partner', tenantCode: 'ACME' }),
        403,
        'SUPER_ADMIN_NOT_ALLOWED',
      );
    }
  });

  it('rule 3: the key holder can obtain a token of any external user of the tenant', async () => {
    for (const index of [1, 2, 3]) {
      await tenantUser(h, acme, {
        username: `external${index}@partner.example`,
        organizationId: null,
        type: 'external',
      });
      const response = await partnerLogin(acme.orgKey, {
        username: `external${index}@partner.example`,
      });
      expect(response.status).toBe(201);
      const { data } = await readJson<PartnerLoginBody>(response);
      expect(await whoIs(data.accessToken)).toBe(`external${index}@partner.example`);
    }
  });

  it('rule 3: a login name that is also another tenant user e-mail finds the member', async () => {
    // Legacy rows: a BETA user's e-mail equals the login name of an ACME user.
    await tenantUser(h, beta, { username: 'older.beta', email: 'twin@partner.example' });
    await legacyUser(h, {
      tenantId: acme.tenantId,
      organizationId: null,
      code: null,
      username: 'twin@partner.example',
      email: null,
      status: 2,
      type: 'external',
    });
    const response = await partnerLogin(acme.orgKey, { username: 'twin@partner.example' });
    expect(response.status).toBe(201);
    const { data } = await readJson<PartnerLoginBody>(response);
    expect(data.userInfo.username).toBe('twin@partner.example');
  });

  it('rule 4: token lifetime 15 days (valid at 15 days minus 1 s, 401 after)', async () => {
    const { data } = await readJson<PartnerLoginBody>(
      await partnerLogin(acme.orgKey, { username: 'signer@partner.example' }),
    );
    const payload = JSON.parse(
      Buffer.from(data.accessToken.split('.')[1]!, 'base64url').toString(),
    ) as { exp: number; iat: number };
    expect(payload.exp - payload.iat).toBe(15 * 24 * 3600);
    const start = h.clock.now().getTime();
    h.clock.advance(15 * oneDay - 1000);
    expect(await whoIs(data.accessToken)).toBe('signer@partner.example');
    h.clock.advance(1000);
    expect(await whoIs(data.accessToken)).toBe(401);
    h.clock.set(new Date(start));
  });

  it('rule 4: there is no refresh endpoint for partner tokens', async () => {
    const { data } = await readJson<PartnerLoginBody>(
      await partnerLogin(acme.orgKey, { username: 'signer@partner.example' }),
    );
    const response = await send(app, 'POST', '/api/auth/refresh', {
      json: { refreshToken: data.accessToken },
    });
    expect(response.status).toBe(401);
  });

  it('rule 4: mass revocation is done by revoking the API key: its tokens stop working', async () => {
    const key = await orgKey(h, acme);
    const other = await orgKey(h, acme);
    const tokenOf = async (apiKey: string) =>
      (
        await readJson<PartnerLoginBody>(
          await partnerLogin(apiKey, { username: 'signer@partner.example' }),
        )
      ).data.accessToken;
    const issued = [await tokenOf(key.key), await tokenOf(key.key)];
    const kept = await tokenOf(other.key);
    for (const token of issued) expect(await whoIs(token)).toBe('signer@partner.example');
    await revokeKey(h, key.id);
    for (const token of issued) expect(await whoIs(token)).toBe(401);
    // Tokens of another key are not touched; the revoked key gets no new token.
    expect(await whoIs(kept)).toBe('signer@partner.example');
    await expectUnauthorized(
      await partnerLogin(key.key, { username: 'signer@partner.example' }),
      spec401.invalidKey,
    );
  });

  it('rule 4: tokens of an API key that expired stop working with it', async () => {
    const expiresAt = new Date(h.clock.now().getTime() + oneDay).toISOString();
    const key = await orgKey(h, acme, { expiresAt });
    const { data } = await readJson<PartnerLoginBody>(
      await partnerLogin(key.key, { username: 'signer@partner.example' }),
    );
    const start = h.clock.now().getTime();
    h.clock.advance(oneDay - 1000);
    expect(await whoIs(data.accessToken)).toBe('signer@partner.example');
    h.clock.advance(1000);
    expect(await whoIs(data.accessToken)).toBe(401);
    h.clock.set(new Date(start));
  });

  it('rule 5: 400 TENANT_CODE_REQUIRED: missing tenantCode with a global key', async () => {
    const body = await expectError(
      await partnerLogin(await globalKey(h), { username: 'signer@partner.example' }),
      400,
      'TENANT_CODE_REQUIRED',
    );
    expect(body.details).toEqual({ field: 'tenantCode', code: 'TENANT_CODE_REQUIRED' });
  });

  it('rule 5: with a global key and tenantCode the user of that tenant gets a token', async () => {
    const response = await partnerLogin(await globalKey(h), {
      username: 'signer@partner.example',
      tenantCode: 'ACME',
    });
    expect(response.status).toBe(201);
  });

  it('rule 5: 400 TENANT_CODE_AMBIGUOUS: tenantCode shared by several organizations', async () => {
    // Legacy data: two tenants with one code.
    for (const name of ['Old twin one', 'Old twin two']) {
      await h.deps.db
        .insertInto('tenants')
        .values({
          code: 'TWIN',
          name,
          developer_email: null,
          developer_phone: null,
          created_at: h.now(),
        })
        .execute();
    }
    await expectError(
      await partnerLogin(await globalKey(h), {
        username: 'signer@partner.example',
        tenantCode: 'TWIN',
      }),
      400,
      'TENANT_CODE_AMBIGUOUS',
    );
  });

  it('rule 5: 401 invalid key (and no key at all)', async () => {
    await expectUnauthorized(
      await partnerLogin(wrongKey, { username: 'signer@partner.example' }),
      spec401.invalidKey,
    );
    await expectUnauthorized(await partnerLogin(null, { username: 'signer@partner.example' }));
  });

  it('rule 5: 403 TENANT_CODE_MISMATCH: organization key with the tenantCode of another', async () => {
    await expectError(
      await partnerLogin(acme.orgKey, { username: 'signer@partner.example', tenantCode: 'BETA' }),
      403,
      'TENANT_CODE_MISMATCH',
    );
    // Its own code is accepted.
    const own = await partnerLogin(acme.orgKey, {
      username: 'signer@partner.example',
      tenantCode: 'ACME',
    });
    expect(own.status).toBe(201);
  });

  it('rule 5: 403 TENANT_CODE_MISMATCH: global key bound to a tenant user, other tenantCode', async () => {
    const bound = await globalKey(h, acme.adminUserId);
    await expectError(
      await partnerLogin(bound, { username: 'member.beta', tenantCode: 'BETA' }),
      403,
      'TENANT_CODE_MISMATCH',
    );
  });

  it('rule 5: 404 tenant not found', async () => {
    await expectError(
      await partnerLogin(await globalKey(h), {
        username: 'signer@partner.example',
        tenantCode: 'NOPE',
      }),
      404,
      'TENANT_CODE_NOT_FOUND',
    );
  });

  it('the key is read from the x-api-key header only: a key in the body is ignored (401)', async () => {
    const response = await partnerLogin(null, {
      username: 'signer@partner.example',
      apiKey: acme.orgKey,
      'x-api-key': acme.orgKey,
    });
    await expectUnauthorized(response);
  });

  it('a locked target user gets no token (403 ACCOUNT_LOCKED)', async () => {
    const locked = await tenantUser(h, acme, { username: 'locked.target', type: 'external' });
    await setUserStatus(h, locked.id, 3);
    await expectError(
      await partnerLogin(acme.orgKey, { username: 'locked.target' }),
      403,
      'ACCOUNT_LOCKED',
    );
  });

  it('a partner token is not an access token: it does not open the contract API', async () => {
    const token = await issueToken(h.deps, externalId, 'partner');
    const response = await send(app, 'GET', '/probe/contracts', {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(401);
  });
});
