import { issueToken } from '../../src/auth/tokens';
import { acknowledge } from '../../src/workflow/actions';
import { createDelegation, revokeDelegation } from '../../src/workflow/delegations';
import { addUser, issueApiKey, readJson } from '../support/harness';
import { accountOf, dossierAtRoleStep, guestAnh } from '../workflow/world';
import {
  data,
  get,
  guestBao,
  type TaskItemBody,
  type TaskListBody,
  useTaskWorld,
} from './fixtures';

/** Items as [documentId, stepCode, status, actionAt ?? assignedAt], for one compact expect. */
function summary(list: TaskListBody) {
  return list.items.map((item) => [
    item.document.documentId,
    item.stepCode,
    item.status,
    item.actionAt ?? item.assignedAt,
  ]);
}

const at = (time: string) => `2026-11-25T${time}:00.000Z`;

// hung's records of the day (fixtures.ts), newest first.
const d4Pending = ['', 'XL', 'PENDING', at('11:00')];
const d2Rejected = ['BB-002', 'DUYET', 'REJECTED', at('10:30')];
const d1Approved = ['HD-001', 'DUYET', 'APPROVED', at('10:00')];
const d3Expired = ['TT-003', 'XL', 'EXPIRED', at('09:00')];
const d1Pending = ['HD-001', 'DUYET', 'PENDING', at('09:00')];

describe('Task list query parameters (endpoint 6)', () => {
  const context = useTaskWorld();
  const list = async (query: Record<string, string | number> = {}) =>
    data<TaskListBody>(await get(context.h, { key: context.world.hung.key }, '/tasks', query));

  it('status all (the default) merges pending and completed, newest first by actionAt or assignedAt', async () => {
    const all = await list();
    expect(summary(all)).toEqual([d4Pending, d2Rejected, d1Approved, d3Expired, d1Pending]);
    expect([all.page, all.pageSize, all.total]).toEqual([1, 20, 5]);
    expect(await list({ status: 'all' })).toEqual(all);
  });

  it('status pending lists the waiting tasks the caller takes part in', async () => {
    const pending = await list({ status: 'pending' });
    expect([summary(pending), pending.total]).toEqual([[d4Pending, d1Pending], 2]);
  });

  it('status approved, rejected and expired list the handled records of one action each', async () => {
    expect(summary(await list({ status: 'approved' }))).toEqual([d1Approved]);
    expect(summary(await list({ status: 'rejected' }))).toEqual([d2Rejected]);
    expect(summary(await list({ status: 'expired' }))).toEqual([d3Expired]);
  });

  it('status completed is approved + rejected + expired', async () => {
    const completed = await list({ status: 'completed' });
    expect([summary(completed), completed.total]).toEqual([[d2Rejected, d1Approved, d3Expired], 3]);
  });

  it('accepts the status in any letter case', async () => {
    expect(summary(await list({ status: 'PENDING' }))).toEqual([d4Pending, d1Pending]);
  });

  it('page counts from 1 and pageSize cuts the list; total counts all matches independent of paging', async () => {
    const second = await list({ page: 2, pageSize: 2 });
    expect([summary(second), second.page, second.pageSize, second.total]).toEqual([
      [d1Approved, d3Expired],
      2,
      2,
      5,
    ]);
    const third = await list({ page: 3, pageSize: 2 });
    expect(summary(third)).toEqual([d1Pending]);
    const beyond = await list({ page: 9, pageSize: 2 });
    expect([beyond.items, beyond.total]).toEqual([[], 5]);
    expect((await list({ pageSize: 100 })).pageSize).toBe(100);
  });

  it('fromDate and toDate filter pending records by assignedAt', async () => {
    expect(summary(await list({ status: 'pending', fromDate: at('10:00') }))).toEqual([d4Pending]);
    expect(summary(await list({ status: 'pending', toDate: '2026-11-25T16:00:00+07:00' }))).toEqual(
      [d1Pending],
    );
  });

  it('fromDate and toDate filter completed records by actionAt', async () => {
    const window = { fromDate: '2026-11-25T16:45:00+07:00', toDate: '2026-11-25T10:15:00Z' };
    expect(summary(await list({ status: 'completed', ...window }))).toEqual([d1Approved]);
    // In `all`, each kind is bounded by its own time: d1's pending record was assigned at 09:00.
    expect(summary(await list(window))).toEqual([d1Approved]);
  });

  it('a bare date is a whole UTC day', async () => {
    expect((await list({ fromDate: '2026-11-25', toDate: '2026-11-25' })).total).toBe(5);
    expect((await list({ fromDate: '2026-11-26' })).total).toBe(0);
    expect((await list({ toDate: '2026-11-24' })).total).toBe(0);
  });

  it('documentId is the exact dossier code', async () => {
    expect(summary(await list({ documentId: 'HD-001' }))).toEqual([d1Approved, d1Pending]);
    expect((await list({ documentId: 'HD-00' })).total).toBe(0);
    expect((await list({ documentId: 'hd-001' })).total).toBe(0);
  });

  it('keyword searches the dossier title and the step name, case-insensitively with Vietnamese letters', async () => {
    expect(summary(await list({ keyword: 'BÀN GIAO' }))).toEqual([d2Rejected]);
    expect(summary(await list({ keyword: 'NGUYỄN VĂN ÁNH' }))).toEqual([d1Approved, d1Pending]);
    expect(summary(await list({ keyword: 'phê DUYỆT' }))).toEqual([
      d2Rejected,
      d1Approved,
      d1Pending,
    ]);
    expect(summary(await list({ keyword: 'tờ trình' }))).toEqual([d4Pending, d3Expired]);
    expect((await list({ keyword: '%' })).total).toBe(0);
  });

  it('keyword ignores diacritics, typed or stored, composed or decomposed', async () => {
    expect(summary(await list({ keyword: 'nguyen van anh' }))).toEqual([d1Approved, d1Pending]);
    expect(summary(await list({ keyword: 'BAN GIAO' }))).toEqual([d2Rejected]);
    expect(summary(await list({ keyword: 'HOP DONG' }))).toEqual([d1Approved, d1Pending]);
    // A keyword typed decomposed (NFD) folds like the composed one.
    expect(summary(await list({ keyword: 'Tờ trình'.normalize('NFD') }))).toEqual([
      d4Pending,
      d3Expired,
    ]);
    expect(summary(await list({ keyword: 'phe duyet' }))).toEqual([
      d2Rejected,
      d1Approved,
      d1Pending,
    ]);
  });

  it('combines the parameters', async () => {
    const found = await list({ status: 'completed', keyword: 'duyệt', documentId: 'BB-002' });
    expect(summary(found)).toEqual([d2Rejected]);
  });

  it('ignores unknown query parameters', async () => {
    expect((await list({ sort: 'asc', foo: 'bar', limit: 1 })).total).toBe(5);
  });

  it.each([
    ['status', { status: 'done' }],
    ['page', { page: 0 }],
    ['page', { page: -1 }],
    ['page', { page: 'abc' }],
    ['pageSize', { pageSize: 0 }],
    ['pageSize', { pageSize: 101 }],
    ['fromDate', { fromDate: '25/11/2026' }],
    ['fromDate', { fromDate: '2026-02-30' }],
    ['toDate', { toDate: '2026-11-25T10:00:00' }],
    ['toDate', { fromDate: '2026-11-25T10:00:00Z', toDate: '2026-11-25T09:00:00Z' }],
  ])('gives 400 with details.field %s for an invalid value', async (field, query) => {
    const { h, world } = context;
    const response = await get(h, { key: world.hung.key }, '/tasks', query);
    const body = await readJson<{ statusCode: number; code: string; details: { field: string } }>(
      response,
    );
    expect([response.status, body.statusCode, body.code, body.details.field]).toEqual([
      400,
      400,
      'VALIDATION_ERROR',
      field,
    ]);
  });
});

describe('Task item fields', () => {
  const context = useTaskWorld();

  it('a handled record has every field of the spec table, actionAt and comment included', async () => {
    const { h, world } = context;
    const task = await h.deps.db
      .selectFrom('tasks')
      .selectAll()
      .where('dossier_id', '=', world.d1.id)
      .where('status', '=', 1)
      .executeTakeFirstOrThrow();
    const dossier = await h.deps.db
      .selectFrom('dossiers')
      .selectAll()
      .where('id', '=', world.d1.id)
      .executeTakeFirstOrThrow();
    const list = await data<TaskListBody>(
      await get(h, { key: world.hung.key }, '/tasks', { status: 'approved' }),
    );
    expect(list.items).toEqual([
      {
        taskId: task.id,
        taskCode: task.code,
        stepCode: 'DUYET',
        stepName: 'Phê duyệt nội bộ',
        signType: 'app_submit',
        status: 'APPROVED',
        assignedAt: at('09:00'),
        actionAt: at('10:00'),
        comment: 'Đã kiểm tra',
        document: {
          folderId: world.d1.id,
          documentId: 'HD-001',
          documentUuid: world.d1.uuid,
          documentTitle: 'Hợp đồng lao động Nguyễn Văn Ánh',
          transactionId: dossier.transaction_id,
          ecmClassCode: 'HDLD',
          status: 'IN_PROGRESS',
          requiredCount: 4,
          signedCount: 2,
          createdAt: at('08:00'),
        },
      },
    ]);
  });

  it('omits fields without a value: expireAt without deadline, actionAt on pending records, comment when none, ecmClassCode when none', async () => {
    const { h, world } = context;
    const all = await data<TaskListBody>(await get(h, { key: world.hung.key }, '/tasks'));
    const keys = (item: TaskItemBody) => Object.keys(item).sort();
    const [d4, d2, d1Done, d3, d1Open] = all.items as [
      TaskItemBody,
      TaskItemBody,
      TaskItemBody,
      TaskItemBody,
      TaskItemBody,
    ];
    const base = [
      'assignedAt',
      'document',
      'signType',
      'status',
      'stepCode',
      'stepName',
      'taskCode',
      'taskId',
    ];
    expect(keys(d4)).toEqual([...base, 'expireAt'].sort());
    expect(keys(d1Open)).toEqual(base.sort());
    expect(keys(d1Done)).toEqual([...base, 'actionAt', 'comment'].sort());
    expect(keys(d2)).toEqual([...base, 'actionAt', 'comment'].sort());
    expect(keys(d3)).toEqual([...base, 'actionAt', 'expireAt'].sort());
    expect(Object.keys(d2.document)).not.toContain('ecmClassCode');
    expect(Object.values(d3)).not.toContain(null);
    expect(Object.values(d3.document)).not.toContain(null);
  });

  it('status derivation: NEXT gives APPROVED, REJECT REJECTED, OVERDUE EXPIRED, a waiting task PENDING', async () => {
    const { h, world } = context;
    const all = await data<TaskListBody>(await get(h, { key: world.hung.key }, '/tasks'));
    expect(all.items.map((item) => item.status)).toEqual([
      'PENDING',
      'REJECTED',
      'APPROVED',
      'EXPIRED',
      'PENDING',
    ]);
  });
});

describe('Task list scope rules', () => {
  const context = useTaskWorld();

  it('1. is limited to the authenticated user: lan sees the step where her turn waits, not hung’s records', async () => {
    const { h, world } = context;
    const lan = await data<TaskListBody>(await get(h, { key: world.lan.key }, '/tasks'));
    expect(summary(lan)).toEqual([d1Pending]);
  });

  it('2. with X-API-Key: only the key organization, for the key’s bound user', async () => {
    const { h, world } = context;
    const ktKey = await get(h, { key: world.hungKtKey }, '/tasks');
    expect(await data<TaskListBody>(ktKey)).toEqual({ items: [], page: 1, pageSize: 20, total: 0 });
    const beta = await data<TaskListBody>(await get(h, { key: world.betaKey }, '/tasks'));
    expect(beta.total).toBe(0);
    // The administrator's key: the organization's dossiers, but the admin takes part in none.
    expect((await data<TaskListBody>(await get(h, { key: world.adminKey }, '/tasks'))).total).toBe(
      0,
    );
  });

  it('2. with an access token: what the user sees in the web app, every organization of the tenant', async () => {
    const { h, world } = context;
    const token = await data<TaskListBody>(await get(h, { token: world.hung.token }, '/tasks'));
    expect(summary(token)).toEqual([d4Pending, d2Rejected, d1Approved, d3Expired, d1Pending]);
  });

  it('3. pending records count tasks, handled records count turns: one step appears twice', async () => {
    const { h, world } = context;
    const d1 = await data<TaskListBody>(
      await get(h, { key: world.hung.key }, '/tasks', { documentId: 'HD-001' }),
    );
    expect(d1.total).toBe(2);
    expect(d1.items[0]!.taskCode).toBe(d1.items[1]!.taskCode);
    expect(d1.items.map((item) => item.status)).toEqual(['APPROVED', 'PENDING']);
  });

  it('4. dossiers created in the web app are included with an empty documentId', async () => {
    const { h, world } = context;
    const pending = await data<TaskListBody>(
      await get(h, { key: world.hung.key }, '/tasks', { status: 'pending' }),
    );
    expect(pending.items[0]!.document).toMatchObject({
      documentId: '',
      documentUuid: world.d4.uuid,
      documentTitle: 'Công văn nội bộ',
    });
  });

  it('5. an external signer sees only the dossiers they took part in', async () => {
    const { h, world } = context;
    const anh = await accountOf(h, guestAnh.identityNumber);
    const token = await issueToken(h.deps, anh.id, 'partner');
    const own = await data<TaskListBody>(await get(h, { token }, '/tasks'));
    expect(summary(own)).toEqual([['HD-001', 'KH', 'APPROVED', at('09:00')]]);
    const bao = await accountOf(h, guestBao.taxCode);
    const other = await data<TaskListBody>(
      await get(h, { token: await issueToken(h.deps, bao.id, 'partner') }, '/tasks'),
    );
    expect(summary(other)).toEqual([['BB-002', 'KH', 'APPROVED', at('09:00')]]);
    expect(world.d1.documentId).toBe('HD-001');
  });

  it('6. with no tasks, items is an empty array and total 0 (no 404)', async () => {
    const { h, world } = context;
    const response = await get(h, { key: world.thu.key }, '/tasks', { status: 'pending' });
    expect(response.status).toBe(200);
    const body = await readJson<{ statusCode: number; data: TaskListBody; timestamp: string }>(
      response,
    );
    expect(body).toEqual({
      statusCode: 200,
      data: { items: [], page: 1, pageSize: 20, total: 0 },
      timestamp: at('11:00'),
    });
  });
});

describe('Task list scope rule 1: roles held and delegations', () => {
  const context = useTaskWorld();
  const pendingOf = async (key: string) =>
    data<TaskListBody>(await get(context.h, { key }, '/tasks', { status: 'pending' }));

  it('a role-based step is listed for every holder of the role until the first who acts takes it', async () => {
    const { h, world } = context;
    const { roleTask } = await dossierAtRoleStep(h, world, 'HD-ROLE');
    for (const holder of [world.minh, world.nga]) {
      const pending = await pendingOf(holder.key);
      expect(pending.items.map((item) => [item.taskCode, item.stepCode])).toEqual([
        [roleTask.code, 'KTT'],
      ]);
    }
    expect((await pendingOf(world.hung.key)).items.map((item) => item.taskCode)).not.toContain(
      roleTask.code,
    );
    await acknowledge(h.deps, { taskCode: roleTask.code, actorUserId: world.nga.row.id });
    expect((await pendingOf(world.minh.key)).total).toBe(0);
    const nga = await data<TaskListBody>(await get(h, { key: world.nga.key }, '/tasks'));
    expect(summary(nga)).toEqual([['HD-ROLE', 'KTT', 'APPROVED', h.now()]]);
  });

  it('a delegate sees the delegator’s pending tasks during the delegation period only, never the handled ones', async () => {
    const { h, world } = context;
    const delegation = await createDelegation(h.deps, world.acme, {
      fromUsername: 'hung',
      toUsername: 'thu',
      startsAt: '2026-11-25T12:00:00Z',
      endsAt: '2026-11-25T14:00:00Z',
    });
    expect((await pendingOf(world.thu.key)).total).toBe(0);
    h.clock.set('2026-11-25T12:00:00.000Z');
    const during = await data<TaskListBody>(await get(h, { key: world.thu.key }, '/tasks'));
    expect(summary(during)).toEqual([d4Pending, d1Pending]);
    h.clock.set('2026-11-25T14:00:00.000Z');
    expect((await pendingOf(world.thu.key)).total).toBe(0);
    h.clock.set('2026-11-25T13:00:00.000Z');
    await revokeDelegation(h.deps, delegation.id);
    expect((await pendingOf(world.thu.key)).total).toBe(0);
  });
});

describe('Task list authentication and authorization', () => {
  const context = useTaskWorld();

  it('answers 401 without a credential and with a Bearer token (integration area: X-API-Key or x-access-token)', async () => {
    const { h, world } = context;
    expect((await h.request('GET', '/api/integration/tasks')).status).toBe(401);
    const bearer = await h.request('GET', '/api/integration/tasks', {
      headers: { authorization: `Bearer ${world.hung.token}` },
    });
    expect(bearer.status).toBe(401);
  });

  it('answers 403 to an internal user without task:view', async () => {
    const { h, world } = context;
    const user = await addUser(h, {
      tenantId: world.acme.id,
      organizationId: world.rootId,
      code: 'NOPERM',
      username: 'noperm',
      email: 'noperm@acme.vn',
      status: 2,
      type: 'internal',
    });
    const { key } = await issueApiKey(h, {
      kind: 'organization',
      tenantId: world.acme.id,
      organizationId: world.rootId,
      userId: user.id,
      expiresAt: null,
    });
    const response = await get(h, { key }, '/tasks');
    expect([response.status, (await readJson(response)).message]).toEqual([
      403,
      'Forbidden: insufficient permissions',
    ]);
  });
});
