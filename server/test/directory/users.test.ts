import { addUser } from '../support/harness';
import { client, organizationIdOf, reply, useDirectory } from './fixtures';

interface User {
  code: string | null;
  username: string;
  email: string | null;
  status: number;
  members: { organizationCode: string | null; roleName: string }[];
}

interface Page {
  items: User[];
  page: number;
  pageSize: number;
  total: number;
}

type Query = Record<string, string | number | boolean>;

describe('Endpoint 11: GET /api/integration/directory/users', () => {
  const context = useDirectory();

  const list = async (query: Query = {}) => {
    const { h, world } = context;
    const [status, page] = await reply<Page>(await client(h, world.acmeKey).get('/users', query));
    expect(status).toBe(200);
    return page;
  };
  const usernames = async (query: Query = {}) =>
    (await list(query)).items.map((user) => user.username);

  it('lists the tenant users as full user objects, page 1 of 50 by default', async () => {
    const page = await list();
    expect([page.page, page.pageSize, page.total]).toEqual([1, 50, 5]);
    expect(page.items.map((user) => user.username)).toEqual([
      'admin.acme',
      'anh.dao',
      'webapp.user',
      'binh.le',
      'viewer',
    ]);
    expect(page.items[1]).toEqual({
      code: 'NV001',
      username: 'anh.dao',
      name: 'Đào Thị Ánh',
      email: 'anh.dao@acme.vn',
      phone: '0901000001',
      identityNumber: '001200000001',
      taxCode: null,
      address: null,
      gender: null,
      status: 2,
      type: 'internal',
      members: [
        {
          organizationCode: 'KT',
          organizationName: 'Phòng Kế toán',
          roleCode: 'DEFAULT',
          roleName: 'Nhân viên',
        },
      ],
      createdAt: '2026-11-25T08:00:00.000Z',
      updatedAt: '2026-11-25T08:00:00.000Z',
    });
  });

  it('never includes other tenants, and never returns numeric ids', async () => {
    const { h, world } = context;
    const [, beta] = await reply<Page>(await client(h, world.betaKey).get('/users'));
    expect(beta.items.map((user) => [user.code, user.username])).toEqual([
      ['BETA-ADMIN', 'admin.beta'],
      ['NV001', 'beta.nv001'],
    ]);
    expect(await usernames({ code: 'BETA-ADMIN' })).toEqual([]);
    const body = JSON.stringify(await list());
    expect(body).not.toMatch(/"id"|userId|roleId|organizationId/);
  });

  it.each([
    ['code', 'NV002', ['binh.le']],
    ['code', 'nv002', []],
    ['username', 'ANH.DAO', ['anh.dao']],
    ['username', 'anh', []],
    ['email', 'Binh.Le@ACME.vn', ['binh.le']],
    ['phone', '0901000002', ['binh.le']],
    ['phone', '090100000', []],
    ['identityNumber', '001200000001', ['anh.dao']],
  ])('%s=%s: exact match', async (field, value, expected) => {
    expect(await usernames({ [field]: value })).toEqual(expected);
  });

  it('organizationCode, roleCode, roleName: through memberships, all in one membership', async () => {
    expect(await usernames({ organizationCode: 'KT' })).toEqual(['anh.dao', 'binh.le']);
    expect(await usernames({ roleCode: 'DEFAULT' })).toEqual(['admin.acme', 'anh.dao', 'binh.le']);
    expect(await usernames({ roleName: 'Trưởng phòng' })).toEqual(['binh.le']);
    expect(await usernames({ organizationCode: 'KT', roleName: 'Nhân viên' })).toEqual(['anh.dao']);
    expect(await usernames({ organizationCode: 'NS', roleName: 'Nhân viên' })).toEqual([]);
    expect(await usernames({ roleCode: 'XEM' })).toEqual(['viewer']);
  });

  it('organizationCode not in the tenant gives 404 ORGANIZATION_CODE_NOT_FOUND', async () => {
    const { h, world } = context;
    const [status, body] = await reply(
      await client(h, world.acmeKey).get('/users', { organizationCode: 'BETA' }),
    );
    expect([status, body.code, body.details?.field]).toEqual([
      404,
      'ORGANIZATION_CODE_NOT_FOUND',
      'organizationCode',
    ]);
  });

  it('status: 1 to 4', async () => {
    expect(await usernames({ status: 1 })).toEqual(['webapp.user']);
    expect(await usernames({ status: 2 })).toEqual(['admin.acme', 'anh.dao', 'viewer']);
    expect(await usernames({ status: 3 })).toEqual(['binh.le']);
    expect(await usernames({ status: 4 })).toEqual([]);
  });

  it('hasCode=false finds accounts created in the web app without a code', async () => {
    expect(await list({ hasCode: false })).toMatchObject({
      items: [{ code: null, username: 'webapp.user' }],
      total: 1,
    });
    expect(await usernames({ hasCode: true })).toEqual([
      'admin.acme',
      'anh.dao',
      'binh.le',
      'viewer',
    ]);
  });

  it('q: name, e-mail, login name or code, case-insensitive, Vietnamese letters included', async () => {
    expect(await usernames({ q: 'đào thị' })).toEqual(['anh.dao']);
    expect(await usernames({ q: 'ÁNH' })).toEqual(['anh.dao']);
    expect(await usernames({ q: 'LÊ VĂN' })).toEqual(['binh.le']);
    expect(await usernames({ q: 'BINH.LE@' })).toEqual(['binh.le']);
    expect(await usernames({ q: 'WEBAPP.USER' })).toEqual(['webapp.user']);
    expect(await usernames({ q: 'nv00' })).toEqual(['anh.dao', 'binh.le']);
    expect(await usernames({ q: 'người dùng' })).toEqual(['webapp.user']);
  });

  it('updatedFrom and updatedTo: ISO 8601, for incremental sync', async () => {
    expect(await usernames({ updatedFrom: '2026-11-25T09:00:00Z' })).toEqual(['binh.le', 'viewer']);
    expect(await usernames({ updatedTo: '2026-11-25T09:00:00Z' })).toEqual([
      'admin.acme',
      'anh.dao',
      'webapp.user',
    ]);
  });

  it.each([
    ['status', '0'],
    ['status', '5'],
    ['hasCode', 'no'],
    ['updatedFrom', '2026-11-25 08:00'],
    ['page', '-1'],
    ['pageSize', '201'],
  ])('invalid %s=%s gives 400 with details.field', async (field, value) => {
    const { h, world } = context;
    const [status, body] = await reply(
      await client(h, world.acmeKey).get('/users', { [field]: value }),
    );
    expect([status, body.code, body.details?.field]).toEqual([400, 'VALIDATION_ERROR', field]);
  });

  it('page and pageSize: total counts every match', async () => {
    const page = await list({ page: 3, pageSize: 2 });
    expect(page.items.map((user) => user.username)).toEqual(['viewer']);
    expect([page.page, page.pageSize, page.total]).toEqual([3, 2, 5]);
  });

  it('a membership in a soft-deleted organization shows null organization fields', async () => {
    const { h, world } = context;
    const thue = await organizationIdOf(h, 'KT-THUE');
    const role = await h.deps.db
      .selectFrom('roles')
      .select('id')
      .where('code', '=', 'TT')
      .executeTakeFirstOrThrow();
    await addUser(
      h,
      {
        tenantId: world.acme.id,
        organizationId: thue,
        code: 'NV003',
        username: 'thue',
        email: 'thue@acme.vn',
        status: 2,
        type: 'internal',
      },
      [{ organizationId: thue, roleId: role.id }],
    );
    await h.deps.db
      .updateTable('organizations')
      .set({ deleted_at: h.now() })
      .where('id', '=', thue)
      .execute();
    const page = await list({ code: 'NV003' });
    expect(page.items[0]?.members).toEqual([
      { organizationCode: null, organizationName: null, roleCode: 'TT', roleName: 'Tổ trưởng' },
    ]);
  });
});

describe('Endpoint 12: GET /api/integration/directory/users/{code}', () => {
  const context = useDirectory();

  it('returns one user object', async () => {
    const { h, world } = context;
    const [status, user] = await reply<User>(await client(h, world.acmeKey).get('/users/NV002'));
    expect(status).toBe(200);
    expect(user).toMatchObject({
      code: 'NV002',
      username: 'binh.le',
      name: 'Lê Văn Bình',
      status: 3,
      members: [
        {
          organizationCode: 'KT',
          organizationName: 'Phòng Kế toán',
          roleCode: 'DEFAULT',
          roleName: 'Trưởng phòng',
        },
      ],
    });
  });

  it('a code is looked up in the caller tenant only', async () => {
    const { h, world } = context;
    const [, acme] = await reply<User>(await client(h, world.acmeKey).get('/users/NV001'));
    const [, beta] = await reply<User>(await client(h, world.betaKey).get('/users/NV001'));
    expect([acme.email, beta.email]).toEqual(['anh.dao@acme.vn', 'nv001@beta.vn']);
    const [status, body] = await reply(await client(h, world.betaKey).get('/users/NV002'));
    expect([status, body.code]).toEqual([404, 'USER_CODE_NOT_FOUND']);
  });

  it('unknown code gives 404 USER_CODE_NOT_FOUND', async () => {
    const { h, world } = context;
    const [status, body] = await reply(
      await client(h, world.globalKey).get('/users/NOPE', { tenantCode: 'ACME' }),
    );
    expect([status, body.code, body.details?.field]).toEqual([404, 'USER_CODE_NOT_FOUND', 'code']);
  });

  it('legacy data holding one code twice gives 400 USER_CODE_AMBIGUOUS, never a guess', async () => {
    const { h, world } = context;
    await addUser(h, {
      tenantId: world.acme.id,
      organizationId: null,
      code: null,
      username: 'legacy.twin',
      email: null,
      status: 2,
      type: 'internal',
    });
    await h.deps.db
      .updateTable('users')
      .set({ code: 'NV002' })
      .where('username', '=', 'legacy.twin')
      .execute();
    const [status, body] = await reply(await client(h, world.acmeKey).get('/users/NV002'));
    expect([status, body.code, body.details?.field]).toEqual([400, 'USER_CODE_AMBIGUOUS', 'code']);
  });
});
