import { runCli } from '../admin/runCli';
import { runRaw, withoutAppendOnly } from '../support/forcedFailure';
import { type ContractWorld, contractsPath, openContractWorld } from './fixtures';

jest.setTimeout(60_000);

let world: ContractWorld;
let key: string;
const ids: Record<string, string> = {};

beforeAll(async () => {
  world = await openContractWorld({ TRUST_PROXY: '1' });
  key = await world.keyWith([
    'contract:create',
    'contract:view',
    'contract:send',
    'contract:cancel',
  ]);
  const titles = [
    'Hợp đồng mua bán',
    'Phụ lục hợp đồng',
    'Biên bản nghiệm thu',
    'HỢP ĐỒNG THUÊ NHÀ',
  ];
  for (const [index, title] of titles.entries()) {
    ids[title] = await world.create({ title, expiredAt: `2026-12-1${index}T00:00:00Z` }, key);
    world.h.clock.advance(24 * 3600_000);
  }
  await world.request('POST', `${contractsPath}/${ids['Phụ lục hợp đồng']}/send`, key);
});
afterAll(() => world.close());

interface Page {
  data: { id: string; title: string; status: string; createdAt: string; signers: unknown[] }[];
  meta: { page: number; limit: number; total: number; totalPages: number };
}

async function list(query: string): Promise<Page> {
  const response = await world.request('GET', `${contractsPath}${query}`, key);
  expect(response.status).toBe(200);
  return (await response.json()) as Page;
}

const titlesOf = (page: Page) => page.data.map((item) => item.title);

describe('GET /api/contracts', () => {
  it('defaults: newest first, page 1, limit 20, meta with totalPages; signers in each item', async () => {
    const page = await list('');
    expect(page.meta).toEqual({ page: 1, limit: 20, total: 4, totalPages: 1 });
    expect(titlesOf(page)).toEqual([
      'HỢP ĐỒNG THUÊ NHÀ',
      'Biên bản nghiệm thu',
      'Phụ lục hợp đồng',
      'Hợp đồng mua bán',
    ]);
    expect(page.data[0]!.signers).toHaveLength(2);
  });

  it('paging', async () => {
    const page = await list('?page=2&limit=3');
    expect(page.meta).toEqual({ page: 2, limit: 3, total: 4, totalPages: 2 });
    expect(titlesOf(page)).toEqual(['Hợp đồng mua bán']);
  });

  it('search folds letter case and Vietnamese diacritics', async () => {
    expect(titlesOf(await list('?search=hop%20dong&sortBy=title&order=ASC'))).toEqual([
      'Hợp đồng mua bán',
      'HỢP ĐỒNG THUÊ NHÀ',
      'Phụ lục hợp đồng',
    ]);
    expect(titlesOf(await list(`?search=${encodeURIComponent('NGHIỆM')}`))).toEqual([
      'Biên bản nghiệm thu',
    ]);
    expect((await list('?search=100%25')).meta.total).toBe(0);
  });

  it('status, fromDate/toDate (a bare toDate covers its day), sortBy and order', async () => {
    expect(titlesOf(await list('?status=signing'))).toEqual(['Phụ lục hợp đồng']);
    expect(titlesOf(await list('?fromDate=2026-11-26&toDate=2026-11-27&order=ASC'))).toEqual([
      'Phụ lục hợp đồng',
      'Biên bản nghiệm thu',
    ]);
    expect(titlesOf(await list('?sortBy=expiredAt&order=asc'))[0]).toBe('Hợp đồng mua bán');
    expect(titlesOf(await list('?sortBy=status&order=DESC'))[0]).toBe('Phụ lục hợp đồng');
  });

  it.each([
    ['?limit=101', 'limit'],
    ['?page=0', 'page'],
    ['?status=done', 'status'],
    ['?sortBy=id', 'sortBy'],
    ['?order=UP', 'order'],
    ['?fromDate=yesterday', 'fromDate'],
    ['?fromDate=2026-12-01&toDate=2026-11-01', 'toDate'],
  ])('%s: 400 at %s', async (query, field) => {
    const response = await world.request('GET', `${contractsPath}${query}`, key);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { details: { field: string } }).details.field).toBe(field);
  });
});

describe('audit trail', () => {
  it('GET /{id} shows the trail: UTC times, actor, client address (trusted proxy), user agent', async () => {
    const id = ids['Phụ lục hợp đồng']!;
    const response = await world.h.app.request(`${contractsPath}/${id}`, {
      headers: {
        'x-api-key': key,
        'x-forwarded-for': '198.51.100.7, 10.0.0.1',
        'user-agent': 'partner/2.0',
      },
    });
    const { data } = (await response.json()) as {
      data: {
        auditTrail: {
          seq: number;
          action: string;
          at: string;
          actor: { name: string };
          clientAddress: string;
          userAgent: string | null;
          hash: string;
        }[];
      };
    };
    expect(data.auditTrail.map((event) => event.action)).toEqual(['created', 'sent', 'viewed']);
    const viewed = data.auditTrail[2]!;
    expect(viewed.at).toMatch(/Z$/);
    expect(viewed.actor.name).toMatch(/^Người dùng \d+ <user\d+@acme\.example>$/);
    expect(viewed.clientAddress).toBe('198.51.100.7');
    expect(viewed.userAgent).toBe('partner/2.0');
    expect(new Set(data.auditTrail.map((event) => event.hash)).size).toBe(3);
  });

  it('events cannot be updated or deleted through SQL', async () => {
    const database = world.h.runtime.database;
    await expect(runRaw(database, `UPDATE contract_audit_events SET action = 'x'`)).rejects.toThrow(
      /append-only/,
    );
    await expect(runRaw(database, 'DELETE FROM contract_audit_events')).rejects.toThrow(
      /append-only/,
    );
  });

  it('admin audit verify: holds, then names the first broken link after tampering', async () => {
    const id = ids['Hợp đồng mua bán']!;
    await world.request('GET', `${contractsPath}/${id}`, key);
    await world.request('GET', `${contractsPath}/${id}/download?type=original`, key);
    const { dataDir } = world.h;
    const good = await runCli(dataDir, ['audit', 'verify', '--contract', id, '--json']);
    expect(good.code).toBe(0);
    expect(good.json()).toMatchObject({ contractId: id, valid: true, events: 3 });

    const { id: contractId } = await world.h.deps.db
      .selectFrom('contracts')
      .select('id')
      .where('uuid', '=', id)
      .executeTakeFirstOrThrow();
    const tamper = (statement: string) =>
      withoutAppendOnly(world.h.runtime.database, 'contract_audit_events', statement);
    // Someone rewrites who viewed it.
    await tamper(
      `UPDATE contract_audit_events SET actor_name = 'Someone else' WHERE contract_id = ${contractId} AND seq = 2`,
    );
    const broken = await runCli(dataDir, ['audit', 'verify', '--contract', id]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('AUDIT_CHAIN_BROKEN');
    expect(broken.stderr).toContain('broken at event 2');
    expect(broken.stderr).toContain('was changed after it was written');

    // A removed newest event is noticed through the head.
    const other = ids['Biên bản nghiệm thu']!;
    await world.request('GET', `${contractsPath}/${other}`, key);
    const { id: otherId } = await world.h.deps.db
      .selectFrom('contracts')
      .select('id')
      .where('uuid', '=', other)
      .executeTakeFirstOrThrow();
    await tamper(`DELETE FROM contract_audit_events WHERE contract_id = ${otherId} AND seq = 2`);
    const truncated = await runCli(dataDir, ['audit', 'verify', '--contract', other, '--json']);
    expect(truncated.code).toBe(1);
    expect(truncated.json<{ error: { code: string; message: string } }>().error).toMatchObject({
      code: 'AUDIT_CHAIN_BROKEN',
    });
    expect(truncated.stdout).toContain('event 2');

    const unknown = await runCli(dataDir, ['audit', 'verify', '--contract', 'nope']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('CONTRACT_NOT_FOUND');
  });
});

describe('admin contract-type', () => {
  it('every tenant has type 1 "Hợp đồng"; create numbers the next; list shows them; duplicates refused', async () => {
    const { dataDir } = world.h;
    const created = await runCli(dataDir, [
      'contract-type',
      'create',
      '--tenant',
      'ACME',
      '--name',
      'Phụ lục',
      '--json',
    ]);
    expect(created.code).toBe(0);
    expect(created.json()).toEqual({ tenantCode: 'ACME', id: 2, name: 'Phụ lục' });
    const again = await runCli(dataDir, [
      'contract-type',
      'create',
      '--tenant',
      'ACME',
      '--name',
      'Phụ lục',
    ]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('CONTRACT_TYPE_EXISTS');
    const listed = await runCli(dataDir, ['contract-type', 'list', '--json']);
    expect(
      listed
        .json<{ contractTypes: { tenantCode: string; id: number; name: string }[] }>()
        .contractTypes.map((t) => [t.tenantCode, t.id, t.name]),
    ).toEqual([
      ['ACME', 1, 'Hợp đồng'],
      ['ACME', 2, 'Phụ lục'],
      ['BETA', 1, 'Hợp đồng'],
    ]);
    const missing = await runCli(dataDir, ['contract-type', 'create', '--tenant', 'ACME']);
    expect(missing.code).toBe(2);
    // The new type is usable at once.
    expect((await world.upload(key, { contractTypeId: '2' })).status).toBe(201);
  });
});
