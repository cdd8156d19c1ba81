import { issueToken } from '../../src/auth/tokens';
import type { UserRow } from '../../src/directory/userRecords';
import { DomainError } from '../../src/errors/domainError';
import { statusOfCode } from '../../src/http/errorStatuses';
import type { TenantRow } from '../../src/tenancy/resolveTenant';
import { createOrganization, createRole } from '../../src/tenancy/service';
import {
  approveOpenTask,
  createDossier,
  createProcess,
  type FixtureProcess,
  openTask,
} from '../support/dossiers';
import { addUser, createHarness, type Harness, issueApiKey, seedTenant } from '../support/harness';

/** Day in seconds, for step deadlines. */
export const day = 24 * 60 * 60;

export interface WorkflowUser {
  row: UserRow;
  /** Organization key of ACME's root, bound to this user. */
  key: string;
  /** Partner token (x-access-token) of this user. */
  token: string;
}

/**
 * ACME with staff and a three-step process, BETA as a neighbour:
 *
 * ```
 * ACME (root)  roles: Quản trị (*), Nhân viên (task:view, document:view)
 * └─ KT "Phòng Kế toán"  role: Kế toán trưởng (code KTT; task:view, document:view)
 * users: hung "Nguyễn Văn Hùng" (Nhân viên), lan "Trần Thị Lan" (Nhân viên),
 *        minh "Phạm Văn Minh" and nga "Đỗ Thị Nga" (both Kế toán trưởng),
 *        thu "Lê Thị Thu" (Nhân viên; the delegate in tests), admin.acme (the seeded admin)
 * process HDLD "Hợp đồng lao động":
 *   1 KH   guest, image_signature, deadline 1 day, labels "Ký" / "Từ chối"
 *   2 DUYET internal, app_submit, no deadline, labels "Duyệt" / "Không duyệt" (two turns in the walks)
 *   3 KTT  role Kế toán trưởng, notification, deadline 2 days, labels "Đã xem" / "Trả lại"
 * ```
 */
export interface WorkflowWorld {
  acme: TenantRow;
  beta: TenantRow;
  rootId: number;
  ktId: number;
  ktRoleId: number;
  adminKey: string;
  adminId: number;
  /** Organization key of KT (not the process's organization), bound to hung. */
  hungKtKey: string;
  betaKey: string;
  hung: WorkflowUser;
  lan: WorkflowUser;
  minh: WorkflowUser;
  nga: WorkflowUser;
  thu: WorkflowUser;
  process: FixtureProcess;
}

async function tenantRow(h: Harness, id: number): Promise<TenantRow> {
  return h.deps.db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

export async function buildWorkflowWorld(h: Harness): Promise<WorkflowWorld> {
  const acmeSeed = await seedTenant(h, 'ACME');
  const betaSeed = await seedTenant(h, 'BETA');
  const acme = await tenantRow(h, acmeSeed.tenantId);
  const now = h.now();
  const kt = await createOrganization(h.deps.db, acme, now, { code: 'KT', name: 'Phòng Kế toán' });
  const ktRole = await createRole(h.deps.db, acme, now, {
    organizationCode: 'KT',
    name: 'Kế toán trưởng',
    code: 'KTT',
    permissions: ['task:view', 'document:view'],
  });
  const staffRole = await createRole(h.deps.db, acme, now, {
    organizationCode: 'ACME',
    name: 'Nhân viên',
    code: 'NV',
    permissions: ['task:view', 'document:view'],
  });
  const person = async (
    username: string,
    name: string,
    roleId: number,
    organizationId: number,
  ): Promise<WorkflowUser> => {
    const row = await addUser(
      h,
      {
        tenantId: acme.id,
        organizationId: acmeSeed.rootOrganizationId,
        code: username.toUpperCase(),
        username,
        email: `${username}@acme.vn`,
        name,
        phone: `0901${String(username.length).padStart(6, '0')}`,
        status: 2,
        type: 'internal',
      },
      [{ organizationId, roleId }],
    );
    const { key } = await issueApiKey(h, {
      kind: 'organization',
      tenantId: acme.id,
      organizationId: acmeSeed.rootOrganizationId,
      userId: row.id,
      expiresAt: null,
    });
    return { row, key, token: await issueToken(h.deps, row.id, 'partner') };
  };
  const root = acmeSeed.rootOrganizationId;
  const hung = await person('hung', 'Nguyễn Văn Hùng', staffRole.id, root);
  const lan = await person('lan', 'Trần Thị Lan', staffRole.id, root);
  const minh = await person('minh', 'Phạm Văn Minh', ktRole.id, kt.id);
  const nga = await person('nga', 'Đỗ Thị Nga', ktRole.id, kt.id);
  const thu = await person('thu', 'Lê Thị Thu', staffRole.id, root);
  const hungKtKey = await issueApiKey(h, {
    kind: 'organization',
    tenantId: acme.id,
    organizationId: kt.id,
    userId: hung.row.id,
    expiresAt: null,
  });
  const process = await createProcess(h, {
    tenantId: acme.id,
    organizationId: root,
    code: 'HDLD',
    name: 'Hợp đồng lao động',
    steps: [
      {
        stepCode: 'KH',
        name: 'Khách hàng ký',
        kind: 'guest',
        signType: 'image_signature',
        deadlineSeconds: day,
        approveLabel: 'Ký',
        rejectLabel: 'Từ chối',
      },
      {
        stepCode: 'DUYET',
        name: 'Phê duyệt nội bộ',
        kind: 'internal',
        signType: 'app_submit',
        approveLabel: 'Duyệt',
        rejectLabel: 'Không duyệt',
      },
      {
        stepCode: 'KTT',
        name: 'Kế toán trưởng xác nhận',
        kind: 'role',
        signType: 'notification',
        deadlineSeconds: 2 * day,
        roleId: ktRole.id,
        approveLabel: 'Đã xem',
        rejectLabel: 'Trả lại',
      },
    ],
  });
  return {
    acme,
    beta: await tenantRow(h, betaSeed.tenantId),
    rootId: root,
    ktId: kt.id,
    ktRoleId: ktRole.id,
    adminKey: acmeSeed.orgKey,
    adminId: acmeSeed.adminUserId,
    hungKtKey: hungKtKey.key,
    betaKey: betaSeed.orgKey,
    hung,
    lan,
    minh,
    nga,
    thu,
    process,
  };
}

/** The guest of step KH in the walks. */
export const guestAnh = {
  stepCode: 'KH',
  fullName: 'Nguyễn Văn Ánh',
  email: 'anh.nguyen@khachhang.vn',
  phone: '0912 345 678',
  identityNumber: '001203004005',
};

/** The signers of the acceptance walk: a guest, two turns in DUYET (hung then lan), KTT by role. */
export function walkSigners(world: WorkflowWorld) {
  return [
    guestAnh,
    { stepCode: 'DUYET', userId: world.lan.row.id, order: 2 },
    { stepCode: 'DUYET', userId: world.hung.row.id, order: 1 },
  ];
}

/** The external account created for a guest, by username. */
export async function accountOf(h: Harness, username: string): Promise<UserRow> {
  return h.deps.db
    .selectFrom('users')
    .selectAll()
    .where('username', '=', username)
    .executeTakeFirstOrThrow();
}

/** A fresh harness with the workflow world for one `describe`, closed after it. */
export function useWorkflowWorld(): { h: Harness; world: WorkflowWorld } {
  const context = {} as { h: Harness; world: WorkflowWorld };
  beforeAll(async () => {
    context.h = createHarness();
    context.world = await buildWorkflowWorld(context.h);
  });
  afterAll(() => context.h.close());
  return context;
}

/** The status, code and details.field of the DomainError a call rejects with. */
export async function refusal(call: Promise<unknown>) {
  try {
    await call;
  } catch (error) {
    if (error instanceof DomainError) return [statusOfCode(error.code), error.code, error.field];
    throw error;
  }
  throw new Error('expected a refusal');
}

/** A dossier walked to its role step KTT (Ánh signed, lan approved), with the open role task. */
export async function dossierAtRoleStep(h: Harness, world: WorkflowWorld, documentId?: string) {
  const dossier = await createDossier(h, world.process, {
    ...(documentId ? { documentId } : {}),
    signers: [{ ...guestAnh }, { stepCode: 'DUYET', userId: world.lan.row.id }],
  });
  await approveOpenTask(h, dossier.id, (await accountOf(h, guestAnh.identityNumber)).id);
  await approveOpenTask(h, dossier.id, world.lan.row.id);
  return { dossier, roleTask: (await openTask(h, dossier.id))! };
}
