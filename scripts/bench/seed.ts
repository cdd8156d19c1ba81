/**
 * The bench's data set (scripts/bench.ts, scripts/bench/scaleOut.ts): one tenant with 20
 * organizations, 2,000 staff, 20,000 outside signers and dossiers of a three-step process (guest,
 * 1–2 internal turns, role-based) in realistic end states, seeded through the server's own code
 * on whichever database the runtime opened (SQLite or PostgreSQL).
 */
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import type { Insertable } from 'kysely';
import { createApiKey } from '../../server/src/auth/apiKeys';
import { insertRows, nextRowId } from '../../server/src/db/bulkInsert';
import { inTransaction } from '../../server/src/db/database';
import type {
  DossierFilesTable,
  DossiersTable,
  FileVersionsTable,
  HistoryAction,
  HistoryTable,
  MembershipsTable,
  TasksTable,
  TurnStatus,
  TurnsTable,
  UsersTable,
} from '../../server/src/db/schema';
import {
  insertUser,
  replaceMemberships,
  toUserRow,
  type UserFields,
} from '../../server/src/directory/userRecords';
import type { ManualClock } from '../../server/src/platform/clock';
import { loadProcess } from '../../server/src/processes/queries';
import { createProcess } from '../../server/src/processes/service';
import type { openRuntime } from '../../server/src/runtime';
import { createOrganization, createRole, createTenant } from '../../server/src/tenancy/service';

const organizationCount = 20;
export const staffCount = 2_000;
export const guestCount = 20_000;
/** The heavy user is the first internal signer of one dossier in twenty. */
const heavyShare = 20;

/** How much to seed: `dossiers`, or (when `tasks` > 0) dossiers until that many tasks exist. */
export interface SeedSize {
  dossiers: number;
  tasks: number;
}

/** Deterministic pseudo-random numbers, so two runs seed the same data. */
export function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

export const hour = 3600_000;
/** The seed's first dossier is created then; the clock is set after the last one to read. */
export const start = Date.parse('2026-10-01T00:00:00.000Z');
export const iso = (ms: number) => new Date(ms).toISOString();

export interface Seeded {
  adminKey: string;
  adminUserId: number;
  typicalKey: string;
  heavyKey: string;
  documentIds: string[];
  counts: Record<string, number>;
  seconds: number;
}

/** The bench's process definition, loaded as an operator loads one (processes/service.ts). */
function benchProcess(o: number) {
  return {
    code: `HD${o}`,
    name: `Hợp đồng phòng ${o}`,
    documentClasses: ['HOP_DONG'],
    steps: [
      {
        stepCode: 'KH',
        name: 'Khách hàng ký',
        kind: 'guest',
        signType: 'image_signature',
        deadline: 'P7D',
        actionLabels: { approve: 'Ký', reject: 'Từ chối' },
      },
      {
        stepCode: 'DUYET',
        name: 'Phê duyệt',
        kind: 'internal',
        signType: 'app_submit',
        actionLabels: { approve: 'Duyệt', reject: 'Không duyệt' },
      },
      {
        stepCode: 'TP',
        name: 'Trưởng phòng xác nhận',
        kind: 'role',
        signType: 'notification',
        deadline: 'P3D',
        actionLabels: { approve: 'Đã xem', reject: 'Trả lại' },
        organizationCode: `P${o}`,
        roleName: 'Trưởng phòng',
      },
    ],
  };
}

/**
 * Seeds through the server's own code: organizations, roles and processes through the services
 * an operator uses, users as the directory maps them (`toUserRow`), and the dossiers' rows typed
 * by the schema (`Insertable<…>`) and written in batches by `db/bulkInsert.ts`, inside the one
 * transaction helper; so a migration that adds a required column or renames one breaks the
 * bench at compile time (`npm run check`), never silently.
 */
export async function seed(
  runtime: ReturnType<typeof openRuntime>,
  clock: ManualClock,
  size: SeedSize,
): Promise<Seeded> {
  const { dossiers: dossierCount, tasks: taskTarget } = size;
  const began = performance.now();
  const { deps } = runtime;
  const db = deps.db;
  const now = clock.now().toISOString();
  const { tenant, root, adminRole } = await createTenant(db, now, {
    code: 'BENCH',
    name: 'Bench tenant',
  });
  const pdf = await deps.files.put(Readable.from(Buffer.from('%PDF-1.4\n% bench\n%%EOF\n')));
  deps.files.keep(pdf);
  const next = random(42);

  interface Organization {
    id: number;
    roleId: number;
    staffRoleId: number;
    staff: number[];
    holders: number[];
    steps: number[];
    processId: number;
  }
  const organizations: Organization[] = [];
  for (let o = 0; o < organizationCount; o += 1) {
    const organization = await createOrganization(db, tenant, now, {
      code: `P${o}`,
      name: `Phòng ${o}`,
      type: 2,
    });
    const [staffRole, headRole] = [
      await createRole(db, tenant, now, {
        organizationCode: organization.code,
        name: 'Nhân viên',
        permissions: ['task:view', 'document:view'],
      }),
      await createRole(db, tenant, now, {
        organizationCode: organization.code,
        name: 'Trưởng phòng',
        permissions: ['task:view', 'document:view'],
      }),
    ];
    await createProcess(deps, tenant, root.code, benchProcess(o));
    const loaded = (await loadProcess(db, root.id, `HD${o}`))!;
    organizations.push({
      id: organization.id,
      roleId: headRole.id,
      staffRoleId: staffRole.id,
      staff: [],
      holders: [],
      steps: loaded.steps.map((step) => step.id),
      processId: loaded.process.id,
    });
  }

  const guests: number[] = [];
  const staffIds: number[] = [];
  await inTransaction(db, async (trx) => {
    let userId = await nextRowId(trx, 'users');
    const users: Insertable<UsersTable>[] = [];
    const memberships: Insertable<MembershipsTable>[] = [];
    const user = (fields: UserFields) => {
      users.push({ ...toUserRow(fields, now), id: userId });
      return userId++;
    };
    for (let u = 0; u < staffCount; u += 1) {
      const organization = organizations[u % organizationCount]!;
      const username = u === 0 ? 'bench.heavy' : `nv${u}`;
      const id = user({
        tenantId: tenant.id,
        organizationId: root.id,
        code: `NV${u}`,
        username,
        email: `${username}@bench.vn`,
        name: `Nhân viên ${u}`,
        phone: `0900${String(u).padStart(6, '0')}`,
        status: 2,
        type: 'internal',
      });
      const holder = u % 10 === 1;
      memberships.push({
        user_id: id,
        organization_id: organization.id,
        role_id: holder ? organization.roleId : organization.staffRoleId,
        created_at: now,
      });
      (holder ? organization.holders : organization.staff).push(id);
      staffIds.push(id);
    }
    for (let g = 0; g < guestCount; g += 1) {
      const identity = String(1_000_000_000_00 + g);
      guests.push(
        user({
          tenantId: tenant.id,
          organizationId: null,
          code: `EXT-${g}`,
          username: identity,
          email: `khach${g}@example.vn`,
          name: `Khách hàng ${g}`,
          identityNumber: identity,
          status: 2,
          type: 'external',
        }),
      );
    }
    await insertRows(trx, 'users', users);
    await insertRows(trx, 'memberships', memberships);
  });
  const heavy = staffIds[0]!;
  const heavyOrganization = organizations[0]!;

  const counts = { dossiers: 0, turns: 0, tasks: 0, history: 0 };
  const documentIds: string[] = [];
  const batch = 5_000;
  const more = (from: number) => (taskTarget > 0 ? counts.tasks < taskTarget : from < dossierCount);
  for (let from = 0; more(from); from += batch) {
    await inTransaction(db, async (trx) => {
      const ids = {
        dossier: await nextRowId(trx, 'dossiers'),
        file: await nextRowId(trx, 'dossier_files'),
        task: await nextRowId(trx, 'tasks'),
        turn: await nextRowId(trx, 'turns'),
      };
      const rows = {
        dossiers: [] as Insertable<DossiersTable>[],
        files: [] as Insertable<DossierFilesTable>[],
        versions: [] as Insertable<FileVersionsTable>[],
        tasks: [] as Insertable<TasksTable>[],
        turns: [] as Insertable<TurnsTable>[],
        history: [] as Insertable<HistoryTable>[],
      };
      for (let i = from; i < Math.min(from + batch, dossierCount); i += 1) {
        const organization =
          i % heavyShare === 0 ? heavyOrganization : organizations[i % organizationCount]!;
        const [guestStep, internalStep, roleStep] = organization.steps as [number, number, number];
        const created = start + i * 20_000;
        const draw = next();
        const outcome =
          draw < 0.6
            ? 'COMPLETED'
            : draw < 0.75
              ? 'IN_PROGRESS'
              : draw < 0.85
                ? 'PENDING_SIGN'
                : draw < 0.93
                  ? 'REJECTED'
                  : 'EXPIRED';
        const guest = guests[i % guestCount]!;
        const staff = organization.staff;
        const first = i % heavyShare === 0 ? heavy : staff[Math.floor(next() * staff.length)]!;
        const internal =
          next() < 0.4 ? [first, staff[Math.floor(next() * staff.length)]!] : [first];
        const required = 2 + internal.length;
        const documentId = `HD-${String(i).padStart(7, '0')}`;
        documentIds.push(documentId);

        // What happened, turn by turn: step, position, order, assignee or role.
        type Turn = {
          step: number;
          position: number;
          order: number;
          assignee: number | null;
          role: number | null;
        };
        const turns: Turn[] = [
          { step: guestStep, position: 1, order: 1, assignee: guest, role: null },
          ...internal.map((user, index) => ({
            step: internalStep,
            position: 2,
            order: index + 1,
            assignee: user,
            role: null,
          })),
          { step: roleStep, position: 3, order: 1, assignee: null, role: organization.roleId },
        ];
        const signedTurns =
          outcome === 'COMPLETED'
            ? turns.length
            : outcome === 'IN_PROGRESS'
              ? 1 + Math.floor(next() * internal.length)
              : outcome === 'REJECTED'
                ? 1
                : 0;
        const holder = organization.holders[Math.floor(next() * organization.holders.length)]!;
        const endedAt = created + (signedTurns + 1) * hour;
        const status = outcome;
        const dossier = ids.dossier++;
        rows.dossiers.push({
          id: dossier,
          uuid: crypto.randomUUID(),
          tenant_id: tenant.id,
          organization_id: root.id,
          document_id: documentId,
          title: `Hợp đồng số ${i} với khách hàng ${i % guestCount}`,
          process_id: organization.processId,
          ecm_class_code: 'HOP_DONG',
          status,
          transaction_id: `PI${i.toString(16).toUpperCase().padStart(16, '0')}`,
          metadata: JSON.stringify({ tenantCode: 'BENCH', ref: i }),
          created_by_user_id: null,
          required_count: required,
          signed_count: signedTurns,
          created_at: iso(created),
          updated_at: iso(endedAt),
          started_at: iso(created),
          completed_at: status === 'COMPLETED' ? iso(endedAt) : null,
          rejected_at: status === 'REJECTED' ? iso(endedAt) : null,
          expired_at: status === 'EXPIRED' ? iso(created + 7 * 86400_000) : null,
        });
        const file = ids.file++;
        rows.files.push({
          id: file,
          uuid: crypto.randomUUID(),
          dossier_id: dossier,
          organization_id: root.id,
          kind: 'MAIN',
          position: 1,
          title: 'Hợp đồng',
          ecm_class_code: 'HOP_DONG',
          mime_type: 'application/pdf',
          created_at: iso(created),
        });
        rows.versions.push({
          file_id: file,
          version: 1,
          sha256: pdf.sha256,
          size: pdf.size,
          created_at: iso(created),
        });

        let done = 0;
        let stopped = false;
        for (const position of [1, 2, 3]) {
          const stepTurns = turns.filter((turn) => turn.position === position);
          const opened = created + done * hour;
          if (!stopped) {
            // The step was opened: a task.
            const stepDone = done + stepTurns.length <= signedTurns;
            const deadline = position === 1 ? 7 * 86400_000 : position === 3 ? 3 * 86400_000 : null;
            const taskStatus = stepDone
              ? 2
              : outcome === 'REJECTED'
                ? 3
                : outcome === 'EXPIRED'
                  ? 4
                  : 1;
            const taskAction =
              taskStatus === 1
                ? null
                : taskStatus === 4
                  ? opened + deadline!
                  : created + (done + stepTurns.length) * hour;
            const task = ids.task++;
            rows.tasks.push({
              id: task,
              code: crypto.randomUUID(),
              tenant_id: tenant.id,
              organization_id: root.id,
              dossier_id: dossier,
              step_id: stepTurns[0]!.step,
              status: taskStatus,
              assigned_at: iso(opened),
              expire_at: deadline === null ? null : iso(opened + deadline),
              action_at: taskAction === null ? null : iso(taskAction),
              comment: null,
            });
            counts.tasks += 1;
            let activated = false;
            for (const turn of stepTurns) {
              const signed = done < signedTurns;
              const at = created + (done + 1) * hour;
              let turnStatus: TurnStatus = signed ? 'SIGNED' : 'WAITING';
              if (!signed && !activated) {
                turnStatus =
                  taskStatus === 3 ? 'REJECTED' : taskStatus === 4 ? 'EXPIRED' : 'ACTIVE';
                activated = true;
              } else if (!signed && taskStatus !== 1) turnStatus = 'CANCELLED';
              const actor = turn.assignee ?? (signed || turnStatus === 'REJECTED' ? holder : null);
              const acted = signed || turnStatus === 'REJECTED';
              const turnId = ids.turn++;
              rows.turns.push({
                id: turnId,
                dossier_id: dossier,
                step_id: turn.step,
                step_position: position,
                turn_order: turn.order,
                task_id: task,
                status: turnStatus,
                assignee_user_id: acted ? actor : turn.assignee,
                role_id: turn.role,
                acted_by_user_id: acted ? actor : null,
                acted_at: acted ? iso(at) : null,
              });
              counts.turns += 1;
              const action: HistoryAction | null = signed
                ? 'NEXT'
                : turnStatus === 'REJECTED'
                  ? 'REJECT'
                  : turnStatus === 'EXPIRED'
                    ? 'OVERDUE'
                    : null;
              if (action) {
                const actorId = action === 'OVERDUE' ? turn.assignee : actor;
                rows.history.push({
                  tenant_id: tenant.id,
                  dossier_id: dossier,
                  task_id: task,
                  turn_id: turnId,
                  action,
                  action_label:
                    action === 'NEXT' ? 'Đồng ý' : action === 'REJECT' ? 'Từ chối' : 'Quá hạn',
                  action_at: iso(action === 'OVERDUE' ? taskAction! : at),
                  comment: null,
                  actor_user_id: actorId,
                  actor_name: `Người ký ${actorId}`,
                  actor_username: position === 1 ? null : `nv${actorId}`,
                  actor_email: null,
                });
                counts.history += 1;
              }
              if (signed) done += 1;
            }
            // A step not completed is where the workflow stands (or ended): no later step opens.
            stopped = taskStatus !== 2;
          } else {
            // Not opened (or cancelled after the end): turns without a task.
            for (const turn of stepTurns) {
              const cancelled = outcome === 'REJECTED' || outcome === 'EXPIRED';
              rows.turns.push({
                id: ids.turn++,
                dossier_id: dossier,
                step_id: turn.step,
                step_position: position,
                turn_order: turn.order,
                task_id: null,
                status: cancelled ? 'CANCELLED' : 'WAITING',
                assignee_user_id: turn.assignee,
                role_id: turn.role,
                acted_by_user_id: null,
                acted_at: null,
              });
              counts.turns += 1;
            }
          }
        }
        counts.dossiers += 1;
      }
      await insertRows(trx, 'dossiers', rows.dossiers);
      await insertRows(trx, 'dossier_files', rows.files);
      await insertRows(trx, 'file_versions', rows.versions);
      await insertRows(trx, 'tasks', rows.tasks);
      await insertRows(trx, 'turns', rows.turns);
      await insertRows(trx, 'history', rows.history);
    });
  }

  const key = async (userId: number) =>
    (
      await createApiKey(db, deps.secrets, now, {
        kind: 'organization',
        tenantId: tenant.id,
        organizationId: root.id,
        userId,
        expiresAt: null,
      })
    ).key;
  const admin = await inTransaction(db, async (trx) => {
    const row = await insertUser(
      trx,
      {
        tenantId: tenant.id,
        organizationId: root.id,
        code: 'ADMIN',
        username: 'admin.bench',
        email: 'admin@bench.vn',
        name: 'Admin',
        status: 2,
        type: 'internal',
      },
      now,
    );
    await replaceMemberships(trx, row.id, [{ organizationId: root.id, roleId: adminRole.id }], now);
    return row.id;
  });
  return {
    adminKey: await key(admin),
    adminUserId: admin,
    typicalKey: await key(staffIds[123]!),
    heavyKey: await key(heavy),
    documentIds,
    counts,
    seconds: (performance.now() - began) / 1000,
  };
}
