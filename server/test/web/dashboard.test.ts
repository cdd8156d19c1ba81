import type { Compilable } from 'kysely';
import { onSqlite } from '../../../test/support/onSqlite';
import {
  contractsAwaitingOthers,
  countContractsAwaitingOthers,
  recentContractEventsBy,
} from '../../src/contracts/queries';
import { sqliteHandle } from '../../src/db/database';
import { dossiersOfStatus } from '../../src/dossiers/queries';
import { pendingTasksByDeadline, recentHistoryBy } from '../../src/tasks/queries';
import { openSessionWorld, type SessionWorld } from '../sessions/world';
import { approveOpenTask, createDossier, createProcess } from '../support/dossiers';
import { acmePersonWith, mainOf, textOf, webCookieOf } from './contractPages';

/**
 * `/app/dashboard` over HTTP: the viewer's pending tasks with the closest deadline first, the
 * dossiers they may see by state, their contracts waiting for others and their own recent acts;
 * each part only for someone the API would answer. Its queries are bounded and indexed (EXPLAIN
 * QUERY PLAN of the real queries).
 */

jest.setTimeout(120_000);

let world: SessionWorld;
let admin: string;
const dossierIds: Record<string, number> = {};

const anh = { name: 'Nguyễn Văn Ánh', email: 'anh@partner.example', order: 1 };
const binh = { name: 'Trần Thị Bình', email: 'binh@partner.example', order: 2 };

beforeAll(async () => {
  world = await openSessionWorld();
  const { h, acme } = world;
  admin = await webCookieOf(h, acme.adminUserId);
  const processOf = (code: string, deadlineSeconds: number | null) =>
    createProcess(h, {
      tenantId: acme.tenantId,
      organizationId: acme.rootOrganizationId,
      code,
      steps: [
        {
          stepCode: 'DUYET',
          name: 'Duyệt nội dung',
          kind: 'internal',
          signType: 'app_submit',
          deadlineSeconds,
        },
      ],
    });
  const later = await processOf('QT-TUAN', 7 * 86_400);
  const soon = await processOf('QT-GAP', 2 * 3_600);
  const open = await processOf('QT-MO', null);
  for (const [title, process] of [
    ['Tờ trình mua máy chủ', later],
    ['Hợp đồng lao động gấp', soon],
    ['Công văn không thời hạn', open],
    ['Biên bản đã duyệt', later],
  ] as const) {
    const dossier = await createDossier(h, process, {
      title,
      signers: [{ stepCode: 'DUYET', userId: acme.adminUserId }],
    });
    dossierIds[title] = dossier.id;
  }
  await approveOpenTask(h, dossierIds['Biên bản đã duyệt']!, acme.adminUserId, 'Đồng ý');
  await world.sentContract([anh, binh], { title: 'Hợp đồng chờ đối tác ký' });
  await world.create({ title: 'Hợp đồng còn nháp', signers: [anh] });
});
afterAll(async () => {
  await world?.close();
});

async function dashboard(cookie: string): Promise<string> {
  const response = await world.h.request('GET', '/app/dashboard', { headers: { cookie } });
  expect(response.status).toBe(200);
  return response.text();
}

/** The section of the page whose heading has this id. */
function section(html: string, id: string): string {
  const match = new RegExp(`<section[^>]*aria-labelledby="${id}"[^>]*>([\\s\\S]*?)</section>`).exec(
    mainOf(html),
  );
  if (!match) throw new Error(`no section ${id}`);
  return match[1]!;
}

describe('the dashboard', () => {
  it('lists my pending tasks, the closest deadline first, each linked to its task page', async () => {
    const html = await dashboard(admin);
    const tasks = section(html, 'dash-tasks');
    const titles = [...tasks.matchAll(/class="task-title">([^<]+)</g)].map((m) => m[1]);
    expect(titles).toEqual([
      'Hợp đồng lao động gấp',
      'Tờ trình mua máy chủ',
      'Công văn không thời hạn',
    ]);
    const text = textOf(`<main>${tasks}</main>`);
    expect(text).toContain('3 việc đang chờ');
    expect(text).toContain('Sắp đến hạn');
    expect(text).toContain('Không có hạn');
    expect(text).toContain('Duyệt nội dung · Phê duyệt');
    const task = await world.h.deps.db
      .selectFrom('tasks')
      .select('id')
      .where('dossier_id', '=', dossierIds['Hợp đồng lao động gấp']!)
      .where('status', '=', 1)
      .executeTakeFirstOrThrow();
    expect(tasks).toContain(`href="/app/xu-ly-cong-viec/${task.id}"`);
  });

  it('counts the dossiers I may see by state, each linked to the list of that state', async () => {
    const dossiers = section(await dashboard(admin), 'dash-dossiers');
    expect(dossiers).toContain('href="/app/ho-so?status=PENDING_SIGN"');
    const tile = (count: number, label: string) =>
      `<span class="tile-count">${count}</span><span class="tile-label">${label}</span>`;
    expect(dossiers).toContain(tile(3, 'Chờ ký'));
    expect(dossiers).toContain(tile(1, 'Hoàn tất'));
    expect(dossiers).toContain(tile(0, 'Bị từ chối'));
  });

  it('shows my contracts waiting for others, not drafts', async () => {
    const contracts = textOf(`<main>${section(await dashboard(admin), 'dash-contracts')}</main>`);
    expect(contracts).toContain('Hợp đồng chờ đối tác ký');
    expect(contracts).toContain('0/2 đã ký');
    expect(contracts).toContain('Đang chờ: Nguyễn Văn Ánh');
    expect(contracts).toMatch(/Hạn ký: \d{2}\/\d{2}\/\d{4} \d{2}:\d{2} GMT\+7/);
    expect(contracts).not.toContain('Hợp đồng còn nháp');
  });

  it('lists my own recent acts, newest first', async () => {
    const activity = textOf(`<main>${section(await dashboard(admin), 'dash-activity')}</main>`);
    expect(activity).toContain('Đã xử lý Duyệt nội dung · Biên bản đã duyệt');
    expect(activity).toContain('Đã gửi ký hợp đồng Hợp đồng chờ đối tác ký');
    expect(activity.indexOf('Đã gửi ký hợp đồng')).toBeLessThan(activity.indexOf('Đã xử lý'));
  });

  it('shows another tenant none of it', async () => {
    const beta = textOf(await dashboard(await webCookieOf(world.h, world.beta.adminUserId)));
    for (const title of ['Hợp đồng lao động gấp', 'Hợp đồng chờ đối tác ký', 'Biên bản đã duyệt']) {
      expect(beta).not.toContain(title);
    }
    expect(beta).toContain('Bạn không có công việc nào đang chờ xử lý.');
  });

  it('leaves out what the person may not read, and says so when that is everything', async () => {
    const reader = await acmePersonWith(world, ['contract:view']);
    const html = await dashboard(reader.cookie);
    expect(html).toContain('aria-labelledby="dash-contracts"');
    expect(html).not.toContain('aria-labelledby="dash-tasks"');
    expect(html).not.toContain('aria-labelledby="dash-dossiers"');
    const nobody = await acmePersonWith(world, []);
    expect(textOf(await dashboard(nobody.cookie))).toContain(
      'Tài khoản của bạn chưa được cấp quyền xem hồ sơ, công việc hay hợp đồng.',
    );
  });

  it('speaks English when asked', async () => {
    const english = await world.h.request('GET', '/app/dashboard?lang=en', {
      headers: { cookie: admin },
    });
    const language = /esign_lang=[^;]+/.exec(english.headers.get('set-cookie') ?? '')![0];
    const text = textOf(await dashboard(`${admin}; ${language}`));
    expect(text).toContain('Tasks waiting for you');
    expect(text).toContain('Contracts waiting for others');
    expect(text).toContain('Completed Duyệt nội dung · Biên bản đã duyệt');
  });
});

onSqlite.describe('the dashboard reads bounded rows through indexes (EXPLAIN QUERY PLAN)', () => {
  function planOf(query: Compilable<unknown>): string[] {
    const compiled = query.compile();
    return sqliteHandle(world.h.runtime.database)
      .prepare(`EXPLAIN QUERY PLAN ${compiled.sql}`)
      .all(...(compiled.parameters as unknown[]))
      .map((row) => (row as { detail: string }).detail);
  }

  const big = ['tasks', 't', 'history', 'h', 'dossiers', 'd', 'contracts', 'c', 'e', 'turns'];
  function expectNoTableScan(plan: string[]): void {
    const scans = plan.filter((line) =>
      big.some((table) => new RegExp(`^SCAN ${table}( |$)`).test(line)),
    );
    expect(scans).toEqual([]);
  }

  it('pending tasks start from the caller’s turns', () => {
    const scope = {
      tenantId: world.acme.tenantId,
      organizationId: null,
      userId: world.acme.adminUserId,
      roleIds: [world.acme.adminRoleId],
      delegatorIds: [],
    };
    const pending = planOf(pendingTasksByDeadline(world.h.deps.db, scope, 8));
    expectNoTableScan(pending);
    expect(pending.join('\n')).toMatch(/turns_assignee/);
    expect(pending.join('\n')).toMatch(/turns_role/);
    const history = planOf(recentHistoryBy(world.h.deps.db, scope, 10));
    expectNoTableScan(history);
    expect(history.join('\n')).toMatch(/SEARCH h USING (COVERING )?INDEX history_actor/);
  });

  it('contracts come from the creator’s signing index and the actor’s event index', () => {
    const owner = { tenantId: world.acme.tenantId, userId: world.acme.adminUserId };
    for (const query of [
      countContractsAwaitingOthers(world.h.deps.db, owner),
      contractsAwaitingOthers(world.h.deps.db, owner, 6),
    ]) {
      const plan = planOf(query);
      expectNoTableScan(plan);
      expect(plan.join('\n')).toMatch(/USING (COVERING )?INDEX contracts_creator_signing/);
      expect(plan.join('\n')).not.toMatch(/TEMP B-TREE/);
    }
    const events = planOf(
      recentContractEventsBy(
        world.h.deps.db,
        world.acme.adminUserId,
        { tenantId: world.acme.tenantId, ownerUserId: null },
        10,
      ),
    );
    expectNoTableScan(events);
    expect(events.join('\n')).toMatch(/SEARCH e USING INDEX contract_audit_events_actor/);
    expect(events.join('\n')).not.toMatch(/TEMP B-TREE/);
  });

  it('a dossier count walks one state of the tenant, at most the cap', () => {
    const plan = planOf(
      dossiersOfStatus(
        world.h.deps.db,
        {
          tenantId: world.acme.tenantId,
          userId: world.acme.adminUserId,
          organizationId: null,
          memberOrganizationIds: [world.acme.rootOrganizationId],
          roleIds: [world.acme.adminRoleId],
        },
        'PENDING_SIGN',
        1000,
      ),
    );
    expectNoTableScan(plan);
    expect(plan.join('\n')).toMatch(/SEARCH d USING (COVERING )?INDEX dossiers_tenant_status/);
  });
});
