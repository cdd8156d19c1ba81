import { reject } from '../../src/workflow/actions';
import { expireOverdueTasks } from '../../src/workflow/deadlines';
import {
  approveOpenTask,
  createDossier,
  createProcess,
  type FixtureDossier,
  type FixtureProcess,
  openTask,
} from '../support/dossiers';
import { createHarness, type Harness, readJson } from '../support/harness';
import { accountOf, buildWorkflowWorld, guestAnh, type WorkflowWorld } from '../workflow/world';

export const base = '/api/integration';

export interface Envelope<T> {
  statusCode: number;
  data: T;
  timestamp: string;
}

export interface TaskItemBody {
  taskId: number;
  taskCode: string;
  stepCode: string;
  stepName: string;
  signType: string;
  status: string;
  assignedAt: string;
  expireAt?: string;
  actionAt?: string;
  comment?: string;
  document: Record<string, unknown>;
}

export interface TaskListBody {
  items: TaskItemBody[];
  page: number;
  pageSize: number;
  total: number;
}

/** GET with an API key (`X-API-Key`) or a partner token (`x-access-token`). */
export async function get(
  h: Harness,
  credential: { key: string } | { token: string },
  path: string,
  query: Record<string, string | number> = {},
): Promise<Response> {
  const search = new URLSearchParams(
    Object.entries(query).map(([name, value]): [string, string] => [name, String(value)]),
  ).toString();
  const headers: Record<string, string> =
    'key' in credential ? { 'X-API-Key': credential.key } : { 'x-access-token': credential.token };
  return h.request('GET', `${base}${path}${search ? `?${search}` : ''}`, { headers });
}

/** The `data` of a 200 envelope; fails with the body otherwise. */
export async function data<T>(response: Response): Promise<T> {
  const body = await readJson<Envelope<T>>(response);
  if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${JSON.stringify(body)}`);
  expect(body.statusCode).toBe(200);
  return body.data;
}

/** The status, code and details.field of an error reply, for one `expect`. */
export async function errorOf(response: Response) {
  const body = await readJson<{ code: string; details?: { field?: string } }>(response);
  return [response.status, body.code, body.details?.field];
}

export const guestBao = {
  stepCode: 'KH',
  fullName: 'Công ty TNHH Bảo An',
  email: 'bao@baoan.vn',
  taxCode: '0101234567',
};

/**
 * The workflow world plus hung's history of the day (2026-11-25, UTC):
 *
 * | dossier | documentId | title | what happens to hung |
 * |---|---|---|---|
 * | d1 | HD-001 | Hợp đồng lao động Nguyễn Văn Ánh | DUYET opened 09:00 (hung then lan); hung approves 10:00, lan still pending |
 * | d2 | BB-002 | Biên bản bàn giao thiết bị | DUYET opened 09:00; hung rejects 10:30 |
 * | d3 | TT-003 | Tờ trình mua sắm | XL (1 h deadline) opened 08:00; expired 09:00 (OVERDUE, actor hung) |
 * | d4 | (web app) | Công văn nội bộ | XL opened 11:00, pending |
 *
 * The clock is left at 11:00.
 */
export interface TaskWorld extends WorkflowWorld {
  memo: FixtureProcess;
  d1: FixtureDossier;
  d2: FixtureDossier;
  d3: FixtureDossier;
  d4: FixtureDossier;
}

export async function buildTaskWorld(h: Harness): Promise<TaskWorld> {
  const world = await buildWorkflowWorld(h);
  const memo = await createProcess(h, {
    tenantId: world.acme.id,
    organizationId: world.rootId,
    code: 'TT',
    name: 'Tờ trình',
    steps: [
      {
        stepCode: 'XL',
        name: 'Xử lý tờ trình',
        kind: 'internal',
        signType: 'app_submit',
        deadlineSeconds: 3600,
        approveLabel: 'Đồng ý',
        rejectLabel: 'Từ chối',
      },
    ],
  });
  const hung = world.hung.row.id;
  const d1 = await createDossier(h, world.process, {
    documentId: 'HD-001',
    title: 'Hợp đồng lao động Nguyễn Văn Ánh',
    ecmClassCode: 'HDLD',
    signers: [
      guestAnh,
      { stepCode: 'DUYET', userId: hung },
      { stepCode: 'DUYET', userId: world.lan.row.id },
    ],
  });
  const d2 = await createDossier(h, world.process, {
    documentId: 'BB-002',
    title: 'Biên bản bàn giao thiết bị',
    signers: [guestBao, { stepCode: 'DUYET', userId: hung }],
  });
  const d3 = await createDossier(h, memo, {
    documentId: 'TT-003',
    title: 'Tờ trình mua sắm',
    signers: [{ stepCode: 'XL', userId: hung }],
  });
  h.clock.set('2026-11-25T09:00:00.000Z');
  const anh = await accountOf(h, guestAnh.identityNumber);
  const bao = await accountOf(h, guestBao.taxCode);
  await approveOpenTask(h, d1.id, anh.id);
  await approveOpenTask(h, d2.id, bao.id);
  h.clock.set('2026-11-25T09:30:00.000Z');
  await expireOverdueTasks(h.deps);
  h.clock.set('2026-11-25T10:00:00.000Z');
  await approveOpenTask(h, d1.id, hung, 'Đã kiểm tra');
  h.clock.set('2026-11-25T10:30:00.000Z');
  await reject(h.deps, {
    taskCode: (await openTask(h, d2.id))!.code,
    actorUserId: hung,
    reason: 'Thiếu phụ lục',
  });
  h.clock.set('2026-11-25T11:00:00.000Z');
  const d4 = await createDossier(h, memo, {
    documentId: null,
    title: 'Công văn nội bộ',
    signers: [{ stepCode: 'XL', userId: hung }],
  });
  return { ...world, memo, d1, d2, d3, d4 };
}

/** A fresh harness with the task world for one `describe`, closed after it. */
export function useTaskWorld(): { h: Harness; world: TaskWorld } {
  const context = {} as { h: Harness; world: TaskWorld };
  beforeAll(async () => {
    context.h = createHarness();
    context.world = await buildTaskWorld(context.h);
  });
  afterAll(() => context.h.close());
  return context;
}
