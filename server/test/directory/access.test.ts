import { importLegacyKey } from '../../src/auth/apiKeys';
import { issueToken } from '../../src/auth/tokens';
import { createHarness, globalKey, type Harness, readJson } from '../support/harness';
import { base, client, organizationIdOf, reply, useDirectory, userIdOf } from './fixtures';

interface Page {
  items: { code: string }[];
  total: number;
}

describe('Directory authentication: X-API-Key only', () => {
  const context = useDirectory();

  it('answers 401 when only a Bearer access token is sent', async () => {
    const { h } = context;
    const token = await issueToken(h.deps, await userIdOf(h, 'admin.acme'), 'access');
    const response = await h.request('GET', `${base}/organizations`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(await reply(response)).toEqual([
      401,
      { statusCode: 401, message: 'Unauthorized', error: 'Unauthorized', code: 'UNAUTHORIZED' },
    ]);
  });

  it('answers 401 when only a partner token (x-access-token) is sent', async () => {
    const { h } = context;
    const token = await issueToken(h.deps, await userIdOf(h, 'admin.acme'), 'partner');
    const response = await h.request('GET', `${base}/users`, {
      headers: { 'x-access-token': token },
    });
    expect(response.status).toBe(401);
  });

  it('refuses a wrong key with "API key không hợp lệ"', async () => {
    const { h } = context;
    const [status, body] = await reply(await client(h, 'esk_nope').get('/organizations'));
    expect([status, body.code, body.message]).toEqual([
      401,
      'UNAUTHORIZED',
      'API key không hợp lệ',
    ]);
  });

  it('refuses an old plaintext key with 401 API_KEY_LEGACY_NOT_SUPPORTED', async () => {
    const { h, world } = context;
    await importLegacyKey(h.deps.db, h.deps.secrets, h.now(), {
      tenantId: world.acme.id,
      organizationId: await organizationIdOf(h, 'ACME'),
      userId: await userIdOf(h, 'admin.acme'),
      plaintext: 'legacy-plaintext-key-0001',
    });
    const [status, body] = await reply(await client(h, 'legacy-plaintext-key-0001').get('/roles'));
    expect([status, body.code]).toEqual([401, 'API_KEY_LEGACY_NOT_SUPPORTED']);
  });
});

describe('Authorization: a missing permission gives 403', () => {
  const context = useDirectory();

  it('lets a key whose user holds organization:view read organizations', async () => {
    const { h, world } = context;
    const response = await client(h, world.viewerKey).get('/organizations');
    expect(response.status).toBe(200);
  });

  it.each([
    ['GET', '/roles', 'role:view'],
    ['GET', '/users', 'user:view'],
    ['GET', '/users/NV001', 'user:view'],
  ])('answers 403 with the spec body on %s %s without %s', async (_method, path) => {
    const { h, world } = context;
    const [status, body] = await reply(await client(h, world.viewerKey).get(path));
    expect(status).toBe(403);
    expect(body).toMatchObject({
      statusCode: 403,
      message: 'Forbidden: insufficient permissions',
      error: 'Forbidden',
    });
  });

  it.each([
    ['POST', '/users', { code: 'X1', email: 'x1@acme.vn' }],
    ['PUT', '/users/NV001', { name: 'X' }],
    ['PUT', '/users/NV001/status', { status: 3 }],
    ['POST', '/users/bulk', { users: [{ code: 'X1', email: 'x1@acme.vn' }] }],
  ] as const)(
    'answers 403 on %s %s without user:manage, writing nothing',
    async (method, path, json) => {
      const { h, world } = context;
      const [status, body] = await reply(await client(h, world.viewerKey).send(method, path, json));
      expect([status, body.message]).toEqual([403, 'Forbidden: insufficient permissions']);
      const nv001 = await h.deps.db
        .selectFrom('users')
        .select(['name', 'status'])
        .where('code', '=', 'NV001')
        .where('tenant_id', '=', world.acme.id)
        .executeTakeFirstOrThrow();
      expect(nv001).toEqual({ name: 'Đào Thị Ánh', status: 2 });
      expect(
        await h.deps.db
          .selectFrom('users')
          .select('id')
          .where('code', '=', 'X1')
          .executeTakeFirst(),
      ).toBeUndefined();
    },
  );
});

describe('Tenant and directory errors: tenantCode', () => {
  const context = useDirectory();

  it('TENANT_CODE_REQUIRED: a global key without tenantCode, in the query of a GET', async () => {
    const { h, world } = context;
    const [status, body] = await reply(await client(h, world.globalKey).get('/organizations'));
    expect([status, body.code, body.details?.field]).toEqual([
      400,
      'TENANT_CODE_REQUIRED',
      'tenantCode',
    ]);
  });

  it('TENANT_CODE_REQUIRED: a global key without tenantCode, in the body of a POST or PUT', async () => {
    const { h, world } = context;
    const api = client(h, world.globalKey);
    const created = await reply(
      await api.send('POST', '/users', { code: 'G1', email: 'g1@acme.vn' }),
    );
    const updated = await reply(
      await api.send('PUT', '/users/NV001', { name: 'X', tenantCode: '' }),
    );
    expect([created[0], created[1].code]).toEqual([400, 'TENANT_CODE_REQUIRED']);
    expect([updated[0], updated[1].code]).toEqual([400, 'TENANT_CODE_REQUIRED']);
  });

  it('a global key with tenantCode works in that tenant only', async () => {
    const { h, world } = context;
    const api = client(h, world.globalKey);
    const [status, page] = await reply<Page>(await api.get('/users', { tenantCode: 'BETA' }));
    expect(status).toBe(200);
    expect(page.items.map((user) => user.code)).toEqual(['BETA-ADMIN', 'NV001']);
    const [createdStatus, created] = await reply<{ code: string }>(
      await api.send('POST', '/users', { tenantCode: 'BETA', code: 'G1', email: 'g1@beta.vn' }),
    );
    expect([createdStatus, created.code]).toEqual([201, 'G1']);
    const row = await h.deps.db
      .selectFrom('users')
      .select('tenant_id')
      .where('code', '=', 'G1')
      .executeTakeFirstOrThrow();
    expect(row.tenant_id).toBe(world.beta.id);
  });

  it('TENANT_CODE_NOT_FOUND: no organization with that code', async () => {
    const { h, world } = context;
    const [status, body] = await reply(
      await client(h, world.globalKey).get('/roles', { tenantCode: 'NOPE' }),
    );
    expect([status, body.code, body.details?.field]).toEqual([
      404,
      'TENANT_CODE_NOT_FOUND',
      'tenantCode',
    ]);
  });

  it('TENANT_CODE_AMBIGUOUS: a code shared by several organizations', async () => {
    const { h, world } = context;
    for (const name of ['Twin one', 'Twin two']) {
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
    const [status, body] = await reply(
      await client(h, world.globalKey).get('/users', { tenantCode: 'TWIN' }),
    );
    expect([status, body.code]).toEqual([400, 'TENANT_CODE_AMBIGUOUS']);
  });

  it('TENANT_CODE_MISMATCH: a key of organization A with the tenantCode of B', async () => {
    const { h, world } = context;
    const api = client(h, world.acmeKey);
    const read = await reply(await api.get('/organizations', { tenantCode: 'BETA' }));
    const write = await reply(
      await api.send('POST', '/users/bulk', {
        tenantCode: 'BETA',
        users: [{ code: 'M1', email: 'm1@x.vn' }],
      }),
    );
    expect([read[0], read[1].code]).toEqual([403, 'TENANT_CODE_MISMATCH']);
    expect([write[0], write[1].code]).toEqual([403, 'TENANT_CODE_MISMATCH']);
    expect(
      await h.deps.db.selectFrom('users').select('id').where('code', '=', 'M1').executeTakeFirst(),
    ).toBeUndefined();
  });

  it('an organization key may send its own tenantCode or none', async () => {
    const { h, world } = context;
    const api = client(h, world.acmeKey);
    const [withCode, named] = await reply<Page>(
      await api.get('/organizations', { tenantCode: 'ACME' }),
    );
    const [withoutCode, implied] = await reply<Page>(await api.get('/organizations'));
    expect([withCode, withoutCode]).toEqual([200, 200]);
    expect(named).toEqual(implied);
    expect(named.items.map((organization) => organization.code)).toEqual([
      'ACME',
      'KT',
      'KT-THUE',
      'NS',
    ]);
  });

  it('a global key bound to a user of tenant A gets TENANT_CODE_MISMATCH for tenant B', async () => {
    const { h } = context;
    const bound = client(h, await globalKey(h, await userIdOf(h, 'admin.acme')));
    const [status, body] = await reply(await bound.get('/users', { tenantCode: 'BETA' }));
    expect([status, body.code]).toEqual([403, 'TENANT_CODE_MISMATCH']);
    expect((await bound.get('/users', { tenantCode: 'ACME' })).status).toBe(200);
  });
});

describe('OpenAPI document', () => {
  let h: Harness;
  beforeAll(() => {
    h = createHarness();
  });
  afterAll(() => h.close());

  it('describes endpoints 9–16 with their request and response schemas', async () => {
    const document = await readJson<{
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown> };
    }>(await h.request('GET', '/api/openapi.json'));
    const paths = Object.entries(document.paths)
      .filter(([path]) => path.startsWith(base))
      .map(([path, operations]) => `${path} ${Object.keys(operations).sort().join(',')}`);
    expect(paths).toEqual([
      `${base}/organizations get`,
      `${base}/roles get`,
      `${base}/users get,post`,
      `${base}/users/{code} get,put`,
      `${base}/users/{code}/status put`,
      `${base}/users/bulk post`,
    ]);
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining([
        'DirectoryOrganizationList',
        'DirectoryRoleList',
        'DirectoryUserList',
        'DirectoryUser',
        'DirectoryUserCreate',
        'DirectoryUserUpdate',
        'DirectoryUserStatus',
        'DirectoryUserBulk',
        'DirectoryUserRow',
        'DirectoryUserBulkResult',
      ]),
    );
  });
});
