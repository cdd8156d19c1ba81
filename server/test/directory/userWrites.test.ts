import type { Harness } from '../support/harness';
import {
  client,
  type DirectoryWorld,
  type ErrorReply,
  insertLegacyOrganization,
  reply,
  useDirectory,
} from './fixtures';

interface Member {
  organizationCode: string | null;
  organizationName: string | null;
  roleCode: string;
  roleName: string;
}

interface User {
  code: string | null;
  username: string;
  name: string | null;
  email: string | null;
  phone: string | null;
  status: number;
  members: Member[];
  createdAt: string;
  updatedAt: string;
}

function users(h: Harness, world: DirectoryWorld) {
  return client(h, world.acmeKey);
}

/** The error of a refused write: status, code and the offending field. */
async function refusal(response: Response): Promise<[number, string, string | undefined]> {
  const [status, body] = await reply<ErrorReply>(response);
  return [status, body.code, body.details?.field];
}

async function userCount(h: Harness): Promise<number> {
  const row = await h.deps.db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

const kt = (roleName: string) => ({ organizationCode: 'KT', roleName });

describe('Endpoint 13: POST /api/integration/directory/users', () => {
  const context = useDirectory();
  const create = (json: Record<string, unknown>) =>
    users(context.h, context.world).send('POST', '/users', json);

  it('rule 3: creates an internal user at the tenant root awaiting password setup, HTTP 201', async () => {
    const { h, world } = context;
    const [status, user] = await reply<User>(
      await create({
        code: 'NV010',
        email: 'Hoa.Tran@ACME.vn',
        name: 'Trần Thị Hoa',
        phone: '0901000010',
        identityNumber: '001200000010',
        address: '2 Lý Thái Tổ',
        gender: 'female',
        members: [kt('Nhân viên'), { organizationCode: 'NS', roleCode: 'NV' }],
      }),
    );
    expect(status).toBe(201);
    expect(user).toEqual({
      code: 'NV010',
      username: 'Hoa.Tran@ACME.vn',
      name: 'Trần Thị Hoa',
      email: 'Hoa.Tran@ACME.vn',
      phone: '0901000010',
      identityNumber: '001200000010',
      taxCode: null,
      address: '2 Lý Thái Tổ',
      gender: 'female',
      status: 1,
      type: 'internal',
      members: [
        {
          organizationCode: 'KT',
          organizationName: 'Phòng Kế toán',
          roleCode: 'DEFAULT',
          roleName: 'Nhân viên',
        },
        {
          organizationCode: 'NS',
          organizationName: 'Phòng NHÂN SỰ',
          roleCode: 'NV',
          roleName: 'Nhân viên',
        },
      ],
      createdAt: h.now(),
      updatedAt: h.now(),
    });
    const row = await h.deps.db
      .selectFrom('users')
      .innerJoin('organizations', 'organizations.id', 'users.organization_id')
      .select(['organizations.code', 'users.password_hash', 'users.tenant_id'])
      .where('users.username', '=', 'Hoa.Tran@ACME.vn')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ code: 'ACME', password_hash: null, tenant_id: world.acme.id });
  });

  it('username: defaults to the e-mail, or takes the sent login name', async () => {
    const [, user] = await reply<User>(
      await create({ code: 'NV011', email: 'minh@acme.vn', username: 'minh.pham' }),
    );
    expect([user.username, user.email, user.members]).toEqual(['minh.pham', 'minh@acme.vn', []]);
  });

  it('the same code may exist in another tenant', async () => {
    const { h, world } = context;
    const [status, user] = await reply<User>(
      await client(h, world.betaKey).send('POST', '/users', {
        code: 'NV002',
        email: 'nv002@beta.vn',
      }),
    );
    expect([status, user.code]).toEqual([201, 'NV002']);
  });

  it('409 USER_CODE_ALREADY_EXISTS: the code belongs to another user of the tenant', async () => {
    expect(await refusal(await create({ code: 'NV001', email: 'other@acme.vn' }))).toEqual([
      409,
      'USER_CODE_ALREADY_EXISTS',
      'code',
    ]);
  });

  it('409 USERNAME_ALREADY_EXISTS: the login name exists in the system, in any letter case', async () => {
    expect(
      await refusal(await create({ code: 'X1', email: 'x1@acme.vn', username: 'ANH.DAO' })),
    ).toEqual([409, 'USERNAME_ALREADY_EXISTS', 'username']);
    expect(
      await refusal(await create({ code: 'X1', email: 'x1@acme.vn', username: 'beta.nv001' })),
    ).toEqual([409, 'USERNAME_ALREADY_EXISTS', 'username']);
  });

  it('409 USERNAME_ALREADY_EXISTS: a login name may not be another account e-mail', async () => {
    expect(
      await refusal(await create({ code: 'X1', email: 'x1@acme.vn', username: 'binh.le@acme.vn' })),
    ).toEqual([409, 'USERNAME_ALREADY_EXISTS', 'username']);
  });

  it('409 EMAIL_ALREADY_EXISTS: the e-mail exists in the system (any tenant, any letter case)', async () => {
    expect(await refusal(await create({ code: 'X1', email: 'NV001@BETA.VN' }))).toEqual([
      409,
      'EMAIL_ALREADY_EXISTS',
      'email',
    ]);
    expect(
      await refusal(await create({ code: 'X1', email: 'anh.dao@acme.vn', username: 'x1' })),
    ).toEqual([409, 'EMAIL_ALREADY_EXISTS', 'email']);
  });

  it.each([
    ['code is required', { email: 'x1@acme.vn' }, 'code'],
    ['code has at most 64 characters', { code: 'C'.repeat(65), email: 'x1@acme.vn' }, 'code'],
    ['email is required', { code: 'X1' }, 'email'],
    ['email must be an e-mail', { code: 'X1', email: 'not-an-email' }, 'email'],
    [
      'members has at most 50 rows',
      {
        code: 'X1',
        email: 'x1@acme.vn',
        members: Array.from({ length: 51 }, () => kt('Nhân viên')),
      },
      'members',
    ],
    [
      'a member row needs organizationCode',
      { code: 'X1', email: 'x1@acme.vn', members: [{ roleName: 'A' }] },
      'members.0.organizationCode',
    ],
  ])('400: %s', async (_rule, json, field) => {
    expect(await refusal(await create(json))).toEqual([400, 'VALIDATION_ERROR', field]);
  });

  it('accepts a code of exactly 64 characters', async () => {
    const [status] = await reply(await create({ code: 'C'.repeat(64), email: 'c64@acme.vn' }));
    expect(status).toBe(201);
  });

  it('400 MEMBER_ROLE_REQUIRED: a member row without roleCode and roleName', async () => {
    expect(
      await refusal(
        await create({
          code: 'X1',
          email: 'x1@acme.vn',
          members: [kt('Nhân viên'), { organizationCode: 'NS' }],
        }),
      ),
    ).toEqual([400, 'MEMBER_ROLE_REQUIRED', 'members.1.roleName']);
  });

  it('404 ORGANIZATION_CODE_NOT_FOUND: a member organization not in the tenant', async () => {
    expect(
      await refusal(
        await create({
          code: 'X1',
          email: 'x1@acme.vn',
          members: [{ organizationCode: 'BETA', roleName: 'Quản trị' }],
        }),
      ),
    ).toEqual([404, 'ORGANIZATION_CODE_NOT_FOUND', 'members.0.organizationCode']);
  });

  it('404 ROLE_NOT_FOUND_IN_ORGANIZATION: no role of that organization matches', async () => {
    const members = (member: Record<string, string>) => ({
      code: 'X1',
      email: 'x1@acme.vn',
      members: [member],
    });
    expect(await refusal(await create(members(kt('Giám đốc'))))).toEqual([
      404,
      'ROLE_NOT_FOUND_IN_ORGANIZATION',
      'members.0.roleName',
    ]);
    expect(await refusal(await create(members(kt('Chỉ xem'))))).toEqual([
      404,
      'ROLE_NOT_FOUND_IN_ORGANIZATION',
      'members.0.roleName',
    ]);
    expect(
      await refusal(await create(members({ organizationCode: 'KT', roleCode: 'NV' }))),
    ).toEqual([404, 'ROLE_NOT_FOUND_IN_ORGANIZATION', 'members.0.roleCode']);
  });

  it('400 ROLE_AMBIGUOUS_IN_ORGANIZATION: several roles share the roleCode; use roleName', async () => {
    expect(
      await refusal(
        await create({
          code: 'X1',
          email: 'x1@acme.vn',
          members: [{ organizationCode: 'KT', roleCode: 'DEFAULT' }],
        }),
      ),
    ).toEqual([400, 'ROLE_AMBIGUOUS_IN_ORGANIZATION', 'members.0.roleCode']);
  });

  it('roleCode and roleName naming the same role are accepted', async () => {
    const [status, user] = await reply<User>(
      await create({
        code: 'NV012',
        email: 'nv012@acme.vn',
        members: [{ organizationCode: 'KT', roleCode: 'DEFAULT', roleName: 'Trưởng phòng' }],
      }),
    );
    expect([status, user.members[0]?.roleName]).toEqual([201, 'Trưởng phòng']);
  });

  it('400 MEMBER_ROLE_MISMATCH: roleCode and roleName naming different roles reject the row', async () => {
    expect(
      await refusal(
        await create({
          code: 'X1',
          email: 'x1@acme.vn',
          members: [{ organizationCode: 'NS', roleCode: 'XEM', roleName: 'Nhân viên' }],
        }),
      ),
    ).toEqual([400, 'MEMBER_ROLE_MISMATCH', 'members.0.roleCode']);
  });

  it('409 MEMBER_ORGANIZATION_DUPLICATED: the same organization assigned two roles', async () => {
    expect(
      await refusal(
        await create({
          code: 'X1',
          email: 'x1@acme.vn',
          members: [kt('Nhân viên'), kt('Trưởng phòng')],
        }),
      ),
    ).toEqual([409, 'MEMBER_ORGANIZATION_DUPLICATED', 'members.1.organizationCode']);
  });

  it('400 ORGANIZATION_CODE_AMBIGUOUS: a member organization code shared by several records', async () => {
    const { h, world } = context;
    await insertLegacyOrganization(h, world.acme, 'DUP', 'Legacy one');
    await insertLegacyOrganization(h, world.acme, 'DUP', 'Legacy two');
    expect(
      await refusal(
        await create({
          code: 'X1',
          email: 'x1@acme.vn',
          members: [{ organizationCode: 'DUP', roleName: 'A' }],
        }),
      ),
    ).toEqual([400, 'ORGANIZATION_CODE_AMBIGUOUS', 'members.0.organizationCode']);
  });

  it('a refused creation writes nothing', async () => {
    const { h } = context;
    const before = await userCount(h);
    await create({ code: 'X1', email: 'x1@acme.vn', members: [kt('Nhân viên'), kt('Giám đốc')] });
    expect(await userCount(h)).toBe(before);
    const [status] = await reply(await users(h, context.world).get('/users/X1'));
    expect(status).toBe(404);
  });

  it('a malformed body is a 400, never a 500', async () => {
    const { h, world } = context;
    const response = await h.request('POST', '/api/integration/directory/users', {
      headers: { 'X-API-Key': world.acmeKey, 'content-type': 'application/json' },
      body: '{"code":',
    });
    expect(response.status).toBe(400);
    expect(await refusal(await create({ code: 42, email: 'x@acme.vn' }))).toEqual([
      400,
      'VALIDATION_ERROR',
      'code',
    ]);
  });
});

describe('Endpoint 14: PUT /api/integration/directory/users/{code}', () => {
  const context = useDirectory();
  const update = (code: string, json: Record<string, unknown>) =>
    users(context.h, context.world).send('PUT', `/users/${code}`, json);
  const current = async (code: string) =>
    (await reply<User>(await users(context.h, context.world).get(`/users/${code}`)))[1];

  it('rule 4: only the fields present are overwritten; the updated user is returned', async () => {
    const { h } = context;
    const before = await current('NV001');
    h.clock.advance(60_000);
    const [status, user] = await reply<User>(await update('NV001', { name: 'Đào Thị Ánh Hồng' }));
    expect(status).toBe(200);
    expect(user).toEqual({ ...before, name: 'Đào Thị Ánh Hồng', updatedAt: h.now() });
    expect(await current('NV001')).toEqual(user);
  });

  it('null clears a profile field', async () => {
    const [, user] = await reply<User>(
      await update('NV001', { phone: null, address: '3 Hàng Bài' }),
    );
    expect(user).toMatchObject({ phone: null, address: '3 Hàng Bài' });
  });

  it('members absent keeps the assignments; members: [] changes nothing', async () => {
    const before = (await current('NV001')).members;
    const [, kept] = await reply<User>(await update('NV001', { gender: 'female' }));
    const [, empty] = await reply<User>(await update('NV001', { members: [] }));
    expect(before).toEqual([
      {
        organizationCode: 'KT',
        organizationName: 'Phòng Kế toán',
        roleCode: 'DEFAULT',
        roleName: 'Nhân viên',
      },
    ]);
    expect([kept.members, empty.members]).toEqual([before, before]);
  });

  it('members with rows replaces all assignments', async () => {
    const [, user] = await reply<User>(
      await update('NV001', { members: [{ organizationCode: 'NS', roleName: 'Nhân viên' }] }),
    );
    expect(user.members).toEqual([
      {
        organizationCode: 'NS',
        organizationName: 'Phòng NHÂN SỰ',
        roleCode: 'NV',
        roleName: 'Nhân viên',
      },
    ]);
  });

  it('an update that changes nothing keeps updatedAt', async () => {
    const { h } = context;
    const before = await current('NV001');
    h.clock.advance(60_000);
    const [, user] = await reply<User>(
      await update('NV001', {
        name: before.name,
        members: [{ organizationCode: 'NS', roleCode: 'NV' }],
      }),
    );
    expect(user.updatedAt).toBe(before.updatedAt);
  });

  it('409 IDENTITY_IMMUTABLE: a different email or username', async () => {
    expect(await refusal(await update('NV001', { email: 'new@acme.vn' }))).toEqual([
      409,
      'IDENTITY_IMMUTABLE',
      'email',
    ]);
    expect(await refusal(await update('NV001', { username: 'anh.dao2' }))).toEqual([
      409,
      'IDENTITY_IMMUTABLE',
      'username',
    ]);
  });

  it('re-sending the current email or username, even in other letter case, is accepted', async () => {
    const [status, user] = await reply<User>(
      await update('NV001', { email: 'ANH.DAO@ACME.VN', username: 'Anh.Dao', name: 'Đào Ánh' }),
    );
    expect(status).toBe(200);
    expect([user.email, user.username, user.name]).toEqual([
      'anh.dao@acme.vn',
      'anh.dao',
      'Đào Ánh',
    ]);
  });

  it('member errors apply as on creation, and nothing of the request is written', async () => {
    const before = await current('NV001');
    expect(
      await refusal(
        await update('NV001', { name: 'Changed', members: [kt('Nhân viên'), kt('Nhân viên')] }),
      ),
    ).toEqual([409, 'MEMBER_ORGANIZATION_DUPLICATED', 'members.1.organizationCode']);
    expect(
      await refusal(await update('NV001', { name: 'Changed', members: [kt('Kế toán trưởng')] })),
    ).toEqual([404, 'ROLE_NOT_FOUND_IN_ORGANIZATION', 'members.0.roleName']);
    expect(await current('NV001')).toEqual(before);
  });

  it('404 USER_CODE_NOT_FOUND: unknown code, or a user of another tenant', async () => {
    const { h, world } = context;
    expect(await refusal(await update('NOPE', { name: 'X' }))).toEqual([
      404,
      'USER_CODE_NOT_FOUND',
      'code',
    ]);
    const [status, body] = await reply(
      await client(h, world.betaKey).send('PUT', '/users/NV002', { name: 'X' }),
    );
    expect([status, body.code]).toEqual([404, 'USER_CODE_NOT_FOUND']);
    expect((await current('NV002')).name).toBe('Lê Văn Bình');
  });

  it('400: an invalid field', async () => {
    expect(await refusal(await update('NV001', { name: 'N'.repeat(256) }))).toEqual([
      400,
      'VALIDATION_ERROR',
      'name',
    ]);
  });
});

describe('Endpoint 15: PUT /api/integration/directory/users/{code}/status', () => {
  const context = useDirectory();
  const setStatus = (code: string, status: unknown) =>
    users(context.h, context.world).send('PUT', `/users/${code}/status`, { status });

  it('3 locks an active user; the user object is returned', async () => {
    const { h } = context;
    h.clock.advance(1000);
    const [status, user] = await reply<User>(await setStatus('NV001', 3));
    expect(status).toBe(200);
    expect(user).toMatchObject({ code: 'NV001', status: 3, updatedAt: h.now() });
  });

  it('2 activates a locked user', async () => {
    const [, user] = await reply<User>(await setStatus('NV001', 2));
    expect(user.status).toBe(2);
  });

  it.each([1, 4, 0, '2', null])('only 2 or 3 can be set: %p gives 400', async (value) => {
    expect(await refusal(await setStatus('NV001', value))).toEqual([
      400,
      'VALIDATION_ERROR',
      'status',
    ]);
  });

  it('404 USER_CODE_NOT_FOUND for an unknown code', async () => {
    expect(await refusal(await setStatus('NOPE', 3))).toEqual([404, 'USER_CODE_NOT_FOUND', 'code']);
  });

  it('there is no delete endpoint', async () => {
    const { h, world } = context;
    const response = await h.request('DELETE', '/api/integration/directory/users/NV001', {
      headers: { 'X-API-Key': world.acmeKey },
    });
    expect(response.status).toBe(404);
    const [, user] = await reply<User>(await users(h, world).get('/users/NV001'));
    expect(user.code).toBe('NV001');
  });
});
