import { client, reply, useDirectory } from './fixtures';

interface Role {
  code: string;
  name: string;
  organizationCode: string | null;
  isDepartmentHead: boolean;
  status: number;
}

interface Page {
  items: Role[];
  page: number;
  pageSize: number;
  total: number;
}

describe('Endpoint 10: GET /api/integration/directory/roles', () => {
  const context = useDirectory();

  const list = async (query: Record<string, string | number | boolean> = {}) => {
    const { h, world } = context;
    const [status, page] = await reply<Page>(await client(h, world.acmeKey).get('/roles', query));
    expect(status).toBe(200);
    return page;
  };
  const names = async (query: Record<string, string | number | boolean> = {}) =>
    (await list(query)).items.map((role) => `${role.organizationCode}/${role.name}`);

  it('lists the tenant roles with code, name, organizationCode, isDepartmentHead, status', async () => {
    expect(await list()).toEqual({
      items: [
        {
          code: 'DEFAULT',
          name: 'Quản trị',
          organizationCode: 'ACME',
          isDepartmentHead: false,
          status: 1,
        },
        {
          code: 'DEFAULT',
          name: 'Trưởng phòng',
          organizationCode: 'KT',
          isDepartmentHead: true,
          status: 1,
        },
        {
          code: 'DEFAULT',
          name: 'Nhân viên',
          organizationCode: 'KT',
          isDepartmentHead: false,
          status: 1,
        },
        {
          code: 'TT',
          name: 'Tổ trưởng',
          organizationCode: 'KT-THUE',
          isDepartmentHead: false,
          status: 1,
        },
        {
          code: 'NV',
          name: 'Nhân viên',
          organizationCode: 'NS',
          isDepartmentHead: false,
          status: 1,
        },
        {
          code: 'XEM',
          name: 'Chỉ xem',
          organizationCode: 'NS',
          isDepartmentHead: false,
          status: 1,
        },
      ],
      page: 1,
      pageSize: 50,
      total: 6,
    });
  });

  it('never includes other tenants', async () => {
    const { h, world } = context;
    const [, beta] = await reply<Page>(await client(h, world.betaKey).get('/roles'));
    expect(beta.items.map((role) => `${role.organizationCode}/${role.name}`)).toEqual([
      'BETA/Quản trị',
      'KT/Nhân viên',
    ]);
    expect(await names({ code: 'NV' })).toEqual(['NS/Nhân viên']);
  });

  it('code: exact match (most roles share one default code)', async () => {
    expect(await names({ code: 'DEFAULT' })).toEqual([
      'ACME/Quản trị',
      'KT/Trưởng phòng',
      'KT/Nhân viên',
    ]);
    expect(await names({ code: 'default' })).toEqual([]);
  });

  it('organizationCode: roles of that organization', async () => {
    expect(await names({ organizationCode: 'KT' })).toEqual(['KT/Trưởng phòng', 'KT/Nhân viên']);
    expect(await names({ organizationCode: 'NS', code: 'XEM' })).toEqual(['NS/Chỉ xem']);
  });

  it('organizationCode not in the tenant gives 404 ORGANIZATION_CODE_NOT_FOUND', async () => {
    const { h, world } = context;
    const [status, body] = await reply(
      await client(h, world.acmeKey).get('/roles', { organizationCode: 'BETA' }),
    );
    expect([status, body.code, body.details?.field]).toEqual([
      404,
      'ORGANIZATION_CODE_NOT_FOUND',
      'organizationCode',
    ]);
  });

  it('isDepartmentHead: boolean filter', async () => {
    expect(await names({ isDepartmentHead: true })).toEqual(['KT/Trưởng phòng']);
    expect(await names({ isDepartmentHead: false })).toHaveLength(5);
  });

  it('q: name or code, case-insensitive, Vietnamese letters included', async () => {
    expect(await names({ q: 'NHÂN VIÊN' })).toEqual(['KT/Nhân viên', 'NS/Nhân viên']);
    expect(await names({ q: 'trưởng' })).toEqual(['KT/Trưởng phòng', 'KT-THUE/Tổ trưởng']);
    expect(await names({ q: 'xem' })).toEqual(['NS/Chỉ xem']);
    expect(await names({ q: 'tt' })).toEqual(['KT-THUE/Tổ trưởng']);
  });

  it('updatedFrom and updatedTo: ISO 8601', async () => {
    expect(await names({ updatedFrom: '2026-11-25T10:00:00Z' })).toEqual([
      'NS/Nhân viên',
      'NS/Chỉ xem',
    ]);
    expect(await names({ updatedTo: '2026-11-25T08:00:00Z' })).toHaveLength(4);
  });

  it.each([
    ['isDepartmentHead', 'yes'],
    ['status', 'x'],
    ['updatedTo', '25/11/2026'],
    ['pageSize', '500'],
  ])('invalid %s=%s gives 400 with details.field', async (field, value) => {
    const { h, world } = context;
    const [status, body] = await reply(
      await client(h, world.acmeKey).get('/roles', { [field]: value }),
    );
    expect([status, body.code, body.details?.field]).toEqual([400, 'VALIDATION_ERROR', field]);
  });

  it('page and pageSize: total counts all matches', async () => {
    const page = await list({ page: 2, pageSize: 4 });
    expect(page.items.map((role) => role.name)).toEqual(['Nhân viên', 'Chỉ xem']);
    expect([page.page, page.pageSize, page.total]).toEqual([2, 4, 6]);
  });

  it('status: integer filter (old data may hold other values)', async () => {
    const { h } = context;
    await h.deps.db.updateTable('roles').set({ status: 7 }).where('code', '=', 'TT').execute();
    expect(await names({ status: 7 })).toEqual(['KT-THUE/Tổ trưởng']);
    expect(await names({ status: 1 })).toHaveLength(5);
  });

  it('organizationCode is null when the owning organization is soft-deleted', async () => {
    const { h } = context;
    await h.deps.db
      .updateTable('organizations')
      .set({ deleted_at: h.now() })
      .where('code', '=', 'KT-THUE')
      .execute();
    const page = await list({ code: 'TT' });
    expect(page.items).toEqual([
      { code: 'TT', name: 'Tổ trưởng', organizationCode: null, isDepartmentHead: false, status: 7 },
    ]);
  });
});
