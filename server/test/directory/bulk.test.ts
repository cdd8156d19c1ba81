import type { Harness } from '../support/harness';
import { client, type ErrorReply, reply, useDirectory } from './fixtures';

interface BulkReply {
  total: number;
  created: number;
  updated: number;
  failed: number;
  results: { code: string | null; action: string; errorCode?: string; message?: string }[];
}

interface User {
  code: string;
  name: string | null;
  email: string;
  updatedAt: string;
  members: { organizationCode: string; roleName: string }[];
}

async function codesInTenant(h: Harness, tenantId: number): Promise<string[]> {
  const rows = await h.deps.db
    .selectFrom('users')
    .select('code')
    .where('tenant_id', '=', tenantId)
    .orderBy('id')
    .execute();
  return rows.map((row) => row.code ?? '(none)');
}

describe('Endpoint 16: POST /api/integration/directory/users/bulk', () => {
  const context = useDirectory();
  const bulk = (users: unknown, key = context.world.acmeKey) =>
    client(context.h, key).send('POST', '/users/bulk', { users });
  const user = async (code: string) =>
    (await reply<User>(await client(context.h, context.world.acmeKey).get(`/users/${code}`)))[1];

  it('rule 6: upserts by code, HTTP 200 with total, created, updated, failed and results', async () => {
    const { h } = context;
    h.clock.advance(60_000);
    const [status, body] = await reply<BulkReply>(
      await bulk([
        { code: 'NV001', email: 'anh.dao@acme.vn', name: 'Đào Thị Ánh (sync)' },
        {
          code: 'NV100',
          email: 'nv100@acme.vn',
          name: 'Phạm Văn Cường',
          members: [{ organizationCode: 'NS', roleName: 'Nhân viên' }],
        },
      ]),
    );
    expect(status).toBe(200);
    expect(body).toEqual({
      total: 2,
      created: 1,
      updated: 1,
      failed: 0,
      results: [
        { code: 'NV001', action: 'updated' },
        { code: 'NV100', action: 'created' },
      ],
    });
    expect(await user('NV001')).toMatchObject({ name: 'Đào Thị Ánh (sync)', updatedAt: h.now() });
    expect(await user('NV100')).toMatchObject({
      name: 'Phạm Văn Cường',
      members: [{ organizationCode: 'NS', roleName: 'Nhân viên' }],
    });
  });

  it('users absent from the payload are not touched, locked or deleted', async () => {
    const { h, world } = context;
    const before = await user('NV002');
    await bulk([{ code: 'NV101', email: 'nv101@acme.vn' }]);
    expect(await user('NV002')).toEqual(before);
    expect(await codesInTenant(h, world.acme.id)).toEqual([
      'ACME-ADMIN',
      'NV001',
      '(none)',
      'NV002',
      'VIEWER',
      'NV100',
      'NV101',
    ]);
  });

  it('a failed row does not undo the others; each failure carries errorCode and message', async () => {
    const { h, world } = context;
    const [status, body] = await reply<BulkReply>(
      await bulk([
        { code: 'NV102', email: 'nv102@acme.vn' },
        { code: 'NV103', email: 'not-an-email' },
        { code: 'NV104', email: 'NV001@beta.vn' },
        {
          code: 'NV105',
          email: 'nv105@acme.vn',
          members: [{ organizationCode: 'KT', roleCode: 'DEFAULT' }],
        },
        { email: 'no-code@acme.vn' },
        { code: 'NV106', email: 'nv106@acme.vn' },
      ]),
    );
    expect(status).toBe(200);
    expect(body).toMatchObject({ total: 6, created: 2, updated: 0, failed: 4 });
    expect(body.results.map(({ code, action, errorCode }) => [code, action, errorCode])).toEqual([
      ['NV102', 'created', undefined],
      ['NV103', 'failed', 'VALIDATION_ERROR'],
      ['NV104', 'failed', 'EMAIL_ALREADY_EXISTS'],
      ['NV105', 'failed', 'ROLE_AMBIGUOUS_IN_ORGANIZATION'],
      [null, 'failed', 'VALIDATION_ERROR'],
      ['NV106', 'created', undefined],
    ]);
    expect(body.results[1]?.message).toMatch(/^email: /);
    expect(body.results[2]?.message).toBe('E-mail NV001@beta.vn already exists');
    const codes = await codesInTenant(h, world.acme.id);
    expect(codes.filter((code) => /^NV10[2-6]$/.test(code))).toEqual(['NV102', 'NV106']);
  });

  it('updating follows rule 4: a different email fails with IDENTITY_IMMUTABLE, other letter case is accepted', async () => {
    const [, body] = await reply<BulkReply>(
      await bulk([
        { code: 'NV002', email: 'someone.else@acme.vn', name: 'Changed' },
        { code: 'NV001', email: 'ANH.DAO@ACME.VN', username: 'ANH.DAO', name: 'Đào Thị Ánh' },
        { code: 'VIEWER', email: 'viewer@acme.vn', username: 'viewer2' },
      ]),
    );
    expect(body.results).toEqual([
      {
        code: 'NV002',
        action: 'failed',
        errorCode: 'IDENTITY_IMMUTABLE',
        message: 'email cannot be changed',
      },
      { code: 'NV001', action: 'updated' },
      {
        code: 'VIEWER',
        action: 'failed',
        errorCode: 'IDENTITY_IMMUTABLE',
        message: 'username cannot be changed',
      },
    ]);
    expect((await user('NV002')).name).toBe('Lê Văn Bình');
    expect(await user('NV001')).toMatchObject({ name: 'Đào Thị Ánh', email: 'anh.dao@acme.vn' });
  });

  it('updating follows rule 4: members absent or [] keep the assignments, rows replace them', async () => {
    const members = async () =>
      (await user('NV100')).members.map((member) => member.organizationCode);
    await bulk([{ code: 'NV100', email: 'nv100@acme.vn', members: [] }]);
    expect(await members()).toEqual(['NS']);
    await bulk([
      {
        code: 'NV100',
        email: 'nv100@acme.vn',
        members: [{ organizationCode: 'KT', roleName: 'Nhân viên' }],
      },
    ]);
    expect(await members()).toEqual(['KT']);
  });

  it('an unchanged row is reported as updated and keeps updatedAt', async () => {
    const { h } = context;
    const before = await user('NV100');
    h.clock.advance(60_000);
    const [, body] = await reply<BulkReply>(
      await bulk([{ code: 'NV100', email: 'nv100@acme.vn' }]),
    );
    expect(body.results).toEqual([{ code: 'NV100', action: 'updated' }]);
    expect((await user('NV100')).updatedAt).toBe(before.updatedAt);
  });

  it('400 USER_CODE_DUPLICATED_IN_PAYLOAD: a code repeated in the payload, and nothing is written', async () => {
    const { h, world } = context;
    const before = await codesInTenant(h, world.acme.id);
    const [status, body] = await reply<ErrorReply>(
      await bulk([
        { code: 'NV200', email: 'nv200@acme.vn' },
        { code: 'NV001', email: 'anh.dao@acme.vn', name: 'Should not be written' },
        { code: 'NV200', email: 'nv200b@acme.vn' },
      ]),
    );
    expect([status, body.code, body.details?.field]).toEqual([
      400,
      'USER_CODE_DUPLICATED_IN_PAYLOAD',
      'users.2.code',
    ]);
    expect(await codesInTenant(h, world.acme.id)).toEqual(before);
    expect((await user('NV001')).name).toBe('Đào Thị Ánh');
  });

  it('accepts 200 rows', async () => {
    const { h, world } = context;
    const rows = Array.from({ length: 200 }, (_, index) => ({
      code: `B${String(index).padStart(3, '0')}`,
      email: `b${index}@acme.vn`,
      name: `Nhân viên ${index}`,
      members: [{ organizationCode: 'KT', roleName: 'Nhân viên' }],
    }));
    const [status, body] = await reply<BulkReply>(await bulk(rows));
    expect(status).toBe(200);
    expect([body.total, body.created, body.updated, body.failed]).toEqual([200, 200, 0, 0]);
    expect(body.results[199]).toEqual({ code: 'B199', action: 'created' });
    const count = await h.deps.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('tenant_id', '=', world.acme.id)
      .where('code', 'like', 'B%')
      .executeTakeFirstOrThrow();
    expect(Number(count.count)).toBe(200);
  });

  it.each([
    [
      '201 rows',
      Array.from({ length: 201 }, (_, index) => ({
        code: `C${index}`,
        email: `c${index}@acme.vn`,
      })),
    ],
    ['no rows', []],
    ['users not an array', { code: 'C1' }],
  ])('400 for %s, and nothing is written', async (_case, users) => {
    const { h, world } = context;
    const before = await codesInTenant(h, world.acme.id);
    const [status, body] = await reply<ErrorReply>(await bulk(users));
    expect([status, body.code, body.details?.field]).toEqual([400, 'VALIDATION_ERROR', 'users']);
    expect(await codesInTenant(h, world.acme.id)).toEqual(before);
  });

  it('rows are upserted in the caller tenant only', async () => {
    const { h, world } = context;
    const [, body] = await reply<BulkReply>(
      await bulk([{ code: 'NV001', email: 'nv001@beta.vn', name: 'Beta sync' }], world.betaKey),
    );
    expect(body.results).toEqual([{ code: 'NV001', action: 'updated' }]);
    expect((await user('NV001')).name).toBe('Đào Thị Ánh');
    const beta = await h.deps.db
      .selectFrom('users')
      .select('name')
      .where('tenant_id', '=', world.beta.id)
      .where('code', '=', 'NV001')
      .executeTakeFirstOrThrow();
    expect(beta.name).toBe('Beta sync');
  });
});
