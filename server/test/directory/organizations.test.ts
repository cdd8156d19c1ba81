import { createHarness, type Harness } from '../support/harness';
import {
  buildDirectory,
  client,
  type DirectoryClient,
  type DirectoryWorld,
  insertLegacyOrganization,
  organizationIdOf,
  reply,
} from './fixtures';

interface Organization {
  code: string;
  name: string;
  parentCode: string | null;
  type: number;
  status: number;
  address: string | null;
  phone: string | null;
}

interface Page {
  items: Organization[];
  page: number;
  pageSize: number;
  total: number;
}

describe('Endpoint 9: GET /api/integration/directory/organizations', () => {
  let h: Harness;
  let world: DirectoryWorld;
  let api: DirectoryClient;
  beforeAll(async () => {
    h = createHarness();
    world = await buildDirectory(h);
    api = client(h, world.acmeKey);
  });
  afterAll(() => h.close());

  const codes = async (query: Record<string, string | number> = {}) => {
    const [status, page] = await reply<Page>(await api.get('/organizations', query));
    expect(status).toBe(200);
    return page.items.map((organization) => organization.code);
  };

  it('lists the tenant organizations as bare objects with the spec fields, page 1 of 50 by default', async () => {
    const [status, page] = await reply<Page>(await api.get('/organizations'));
    expect(status).toBe(200);
    expect(page).toEqual({
      items: [
        {
          code: 'ACME',
          name: 'Tenant ACME',
          parentCode: null,
          type: 1,
          status: 1,
          address: null,
          phone: null,
        },
        {
          code: 'KT',
          name: 'Phòng Kế toán',
          parentCode: 'ACME',
          type: 2,
          status: 1,
          address: '1 Tràng Tiền, Hà Nội',
          phone: '024 3825 0000',
        },
        {
          code: 'KT-THUE',
          name: 'Tổ Thuế',
          parentCode: 'KT',
          type: 3,
          status: 3,
          address: null,
          phone: null,
        },
        {
          code: 'NS',
          name: 'Phòng NHÂN SỰ',
          parentCode: 'ACME',
          type: 2,
          status: 2,
          address: null,
          phone: null,
        },
      ],
      page: 1,
      pageSize: 50,
      total: 4,
    });
  });

  it('never includes other tenants', async () => {
    const [, beta] = await reply<Page>(await client(h, world.betaKey).get('/organizations'));
    expect(beta.items.map((organization) => [organization.code, organization.name])).toEqual([
      ['BETA', 'Tenant BETA'],
      ['KT', 'Phòng Kế toán BETA'],
    ]);
    expect(await codes({ q: 'BETA' })).toEqual([]);
  });

  it('code: exact match', async () => {
    expect(await codes({ code: 'KT' })).toEqual(['KT']);
    expect(await codes({ code: 'kt' })).toEqual([]);
  });

  it('parentCode: direct children only', async () => {
    expect(await codes({ parentCode: 'ACME' })).toEqual(['KT', 'NS']);
    expect(await codes({ parentCode: 'KT' })).toEqual(['KT-THUE']);
    expect(await codes({ parentCode: 'KT-THUE' })).toEqual([]);
  });

  it('parentCode not in the tenant gives 404 ORGANIZATION_CODE_NOT_FOUND', async () => {
    const [status, body] = await reply(await api.get('/organizations', { parentCode: 'BETA' }));
    expect([status, body.code, body.details?.field]).toEqual([
      404,
      'ORGANIZATION_CODE_NOT_FOUND',
      'parentCode',
    ]);
  });

  it('status and type: integer filters', async () => {
    expect(await codes({ status: 1 })).toEqual(['ACME', 'KT']);
    expect(await codes({ status: 3 })).toEqual(['KT-THUE']);
    expect(await codes({ type: 2 })).toEqual(['KT', 'NS']);
    expect(await codes({ type: 2, status: 2 })).toEqual(['NS']);
  });

  it('q: name or code, case-insensitive, Vietnamese letters included', async () => {
    expect(await codes({ q: 'nhân sự' })).toEqual(['NS']);
    expect(await codes({ q: 'PHÒNG KẾ' })).toEqual(['KT']);
    expect(await codes({ q: 'THUẾ' })).toEqual(['KT-THUE']);
    expect(await codes({ q: 'kt-' })).toEqual(['KT-THUE']);
    expect(await codes({ q: 'phòng' })).toEqual(['KT', 'NS']);
  });

  it('q: LIKE wildcards are matched literally', async () => {
    expect(await codes({ q: '%' })).toEqual([]);
    expect(await codes({ q: 'K_' })).toEqual([]);
  });

  it('updatedFrom and updatedTo: ISO 8601 bounds, both inclusive', async () => {
    expect(await codes({ updatedFrom: '2026-11-25T09:00:00Z' })).toEqual(['NS']);
    expect(await codes({ updatedFrom: '2026-11-25T10:00:00.000Z' })).toEqual(['NS']);
    expect(await codes({ updatedTo: '2026-11-25T09:00:00Z' })).toEqual(['ACME', 'KT', 'KT-THUE']);
    expect(await codes({ updatedTo: '2026-11-25T16:00:00+07:00' })).toEqual([
      'ACME',
      'KT',
      'KT-THUE',
    ]);
    expect(await codes({ updatedTo: '2026-11-25T17:00:00+07:00' })).toEqual([
      'ACME',
      'KT',
      'KT-THUE',
      'NS',
    ]);
  });

  it('updatedFrom and updatedTo: a bare date covers its whole day (UTC)', async () => {
    expect(await codes({ updatedFrom: '2026-11-25', updatedTo: '2026-11-25' })).toHaveLength(4);
    expect(await codes({ updatedFrom: '2026-11-26' })).toEqual([]);
    expect(await codes({ updatedTo: '2026-11-24' })).toEqual([]);
  });

  it.each([
    ['updatedFrom', 'yesterday'],
    ['updatedTo', '2026-13-01'],
    ['updatedTo', '2026-02-30'],
    ['updatedFrom', '2026-11-25T10:00:00'],
    ['status', 'active'],
    ['type', '-1'],
    ['page', '0'],
    ['page', 'two'],
    ['pageSize', '0'],
    ['pageSize', '201'],
    ['pageSize', '1.5'],
  ])('invalid %s=%s gives 400 with details.field', async (field, value) => {
    const [status, body] = await reply(await api.get('/organizations', { [field]: value }));
    expect([status, body.code, body.details?.field]).toEqual([400, 'VALIDATION_ERROR', field]);
  });

  it('page and pageSize: pages of the same total; a page past the end is empty', async () => {
    const [, second] = await reply<Page>(await api.get('/organizations', { page: 2, pageSize: 3 }));
    expect(second.items.map((organization) => organization.code)).toEqual(['NS']);
    expect([second.page, second.pageSize, second.total]).toEqual([2, 3, 4]);
    const [, past] = await reply<Page>(await api.get('/organizations', { page: 9, pageSize: 200 }));
    expect([past.items, past.pageSize, past.total]).toEqual([[], 200, 4]);
  });

  it('pageSize: at most 200 items are returned', async () => {
    for (let index = 0; index < 200; index += 1) {
      await insertLegacyOrganization(h, world.acme, `BULK-${index}`, `Bulk ${index}`);
    }
    const [, full] = await reply<Page>(await api.get('/organizations', { pageSize: 200 }));
    expect([full.items.length, full.total]).toEqual([200, 204]);
    const [, rest] = await reply<Page>(await api.get('/organizations', { pageSize: 200, page: 2 }));
    expect(rest.items.map((organization) => organization.code)).toEqual([
      'BULK-196',
      'BULK-197',
      'BULK-198',
      'BULK-199',
    ]);
    const [, byDefault] = await reply<Page>(await api.get('/organizations'));
    expect(byDefault.items).toHaveLength(50);
    await h.deps.db.deleteFrom('organizations').where('code', 'like', 'BULK-%').execute();
  });

  it('parentCode is null when the parent is outside the tenant', async () => {
    const betaRoot = await organizationIdOf(h, 'BETA');
    const stray = await insertLegacyOrganization(h, world.acme, 'STRAY', 'Stray');
    await h.deps.db
      .updateTable('organizations')
      .set({ parent_id: betaRoot })
      .where('id', '=', stray)
      .execute();
    const [, page] = await reply<Page>(await api.get('/organizations', { code: 'STRAY' }));
    expect(page.items[0]).toMatchObject({ code: 'STRAY', parentCode: null });
  });

  it('soft-deleted organizations are not listed', async () => {
    await h.deps.db
      .updateTable('organizations')
      .set({ deleted_at: h.now() })
      .where('code', '=', 'STRAY')
      .execute();
    expect(await codes({ code: 'STRAY' })).toEqual([]);
  });

  it('legacy codes repeat: code lists every match, parentCode gives 400 ORGANIZATION_CODE_AMBIGUOUS', async () => {
    await insertLegacyOrganization(h, world.acme, 'KT', 'Phòng Kế toán (cũ)');
    const [, page] = await reply<Page>(await api.get('/organizations', { code: 'KT' }));
    expect(page.items.map((organization) => organization.name)).toEqual([
      'Phòng Kế toán',
      'Phòng Kế toán (cũ)',
    ]);
    const [status, body] = await reply(await api.get('/organizations', { parentCode: 'KT' }));
    expect([status, body.code, body.details?.field]).toEqual([
      400,
      'ORGANIZATION_CODE_AMBIGUOUS',
      'parentCode',
    ]);
  });
});
