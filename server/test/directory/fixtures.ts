import type { TenantRow } from '../../src/tenancy/resolveTenant';
import { createOrganization, createRole } from '../../src/tenancy/service';
import {
  addUser,
  createHarness,
  globalKey,
  type Harness,
  issueApiKey,
  readJson,
  seedTenant,
} from '../support/harness';

export const base = '/api/integration/directory';

/** A caller of the directory with one API key. */
export interface DirectoryClient {
  get(path: string, query?: Record<string, string | number | boolean>): Promise<Response>;
  send(method: 'POST' | 'PUT', path: string, json: unknown): Promise<Response>;
}

export function client(h: Harness, key: string): DirectoryClient {
  const headers = { 'X-API-Key': key };
  return {
    get: (path, query = {}) => {
      const search = new URLSearchParams(
        Object.entries(query).map(([name, value]): [string, string] => [name, String(value)]),
      ).toString();
      return h.request('GET', `${base}${path}${search ? `?${search}` : ''}`, { headers });
    },
    send: (method, path, json) => h.request(method, `${base}${path}`, { headers, json }),
  };
}

export interface ErrorReply {
  statusCode: number;
  message: string;
  error: string;
  code: string;
  details?: { field?: string; code?: string };
}

/** The status and the body of a reply, for one `expect`. */
export async function reply<T = ErrorReply>(response: Response): Promise<[number, T]> {
  return [response.status, await readJson<T>(response)];
}

export interface DirectoryWorld {
  acme: TenantRow;
  beta: TenantRow;
  /** Organization key of ACME's root, bound to ACME's administrator (every permission). */
  acmeKey: string;
  /** Organization key of BETA's root. */
  betaKey: string;
  /** Global key bound to no user. */
  globalKey: string;
  /** Organization key of ACME bound to a user who may only read organizations. */
  viewerKey: string;
}

async function tenantRow(h: Harness, id: number): Promise<TenantRow> {
  return h.deps.db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/**
 * Two tenants with look-alike data, so isolation is visible. ACME:
 *
 * ```
 * ACME "Tenant ACME" (root)            roles: Quản trị (DEFAULT, every permission)
 * ├─ KT "Phòng Kế toán" type 2         roles: Trưởng phòng (DEFAULT, head), Nhân viên (DEFAULT)
 * │  └─ KT-THUE "Tổ Thuế" type 3 st 3  roles: Tổ trưởng (TT)
 * └─ NS "Phòng NHÂN SỰ" type 2 st 2    roles: Nhân viên (NV), Chỉ xem (XEM, organization:view)
 * ```
 *
 * Users: the administrator (ACME-ADMIN), NV001 "Đào Thị Ánh" (KT Nhân viên, then NS NV),
 * NV002 "Lê Văn Bình" (KT Trưởng phòng), a web-app account without code, and the viewer.
 * Timestamps: everything at 08:00 except NV002 and NS, touched at 10:00 on the same day.
 * BETA has its own KT and a user NV001.
 */
export async function buildDirectory(h: Harness): Promise<DirectoryWorld> {
  const acmeSeed = await seedTenant(h, 'ACME');
  const betaSeed = await seedTenant(h, 'BETA');
  const acme = await tenantRow(h, acmeSeed.tenantId);
  const beta = await tenantRow(h, betaSeed.tenantId);
  const now = h.now();
  const kt = await createOrganization(h.deps.db, acme, now, {
    code: 'KT',
    name: 'Phòng Kế toán',
    type: 2,
    address: '1 Tràng Tiền, Hà Nội',
    phone: '024 3825 0000',
  });
  await createOrganization(h.deps.db, acme, now, {
    code: 'KT-THUE',
    name: 'Tổ Thuế',
    parentCode: 'KT',
    type: 3,
  });
  await h.deps.db
    .updateTable('organizations')
    .set({ status: 3 })
    .where('code', '=', 'KT-THUE')
    .execute();
  const ktHead = await createRole(h.deps.db, acme, now, {
    organizationCode: 'KT',
    name: 'Trưởng phòng',
    isDepartmentHead: true,
  });
  const ktStaff = await createRole(h.deps.db, acme, now, {
    organizationCode: 'KT',
    name: 'Nhân viên',
  });
  await createRole(h.deps.db, acme, now, {
    organizationCode: 'KT-THUE',
    name: 'Tổ trưởng',
    code: 'TT',
  });
  await createOrganization(h.deps.db, beta, now, {
    code: 'KT',
    name: 'Phòng Kế toán BETA',
    type: 2,
  });
  await createRole(h.deps.db, beta, now, { organizationCode: 'KT', name: 'Nhân viên', code: 'NV' });

  const internal = {
    tenantId: acme.id,
    organizationId: acmeSeed.rootOrganizationId,
    type: 'internal' as const,
  };
  await addUser(
    h,
    {
      ...internal,
      code: 'NV001',
      username: 'anh.dao',
      email: 'anh.dao@acme.vn',
      name: 'Đào Thị Ánh',
      phone: '0901000001',
      identityNumber: '001200000001',
      status: 2,
    },
    [{ organizationId: kt.id, roleId: ktStaff.id }],
  );
  await addUser(h, {
    ...internal,
    code: null,
    username: 'webapp.user',
    email: 'webapp@acme.vn',
    name: 'Người Dùng Web',
    status: 1,
  });
  await addUser(h, {
    tenantId: beta.id,
    organizationId: betaSeed.rootOrganizationId,
    type: 'internal',
    code: 'NV001',
    username: 'beta.nv001',
    email: 'nv001@beta.vn',
    name: 'Đào Thị Ánh',
    status: 2,
  });

  h.clock.set('2026-11-25T10:00:00.000Z');
  const ns = await createOrganization(h.deps.db, acme, h.now(), {
    code: 'NS',
    name: 'Phòng NHÂN SỰ',
    type: 2,
  });
  await h.deps.db.updateTable('organizations').set({ status: 2 }).where('id', '=', ns.id).execute();
  await createRole(h.deps.db, acme, h.now(), {
    organizationCode: 'NS',
    name: 'Nhân viên',
    code: 'NV',
  });
  const viewerRole = await createRole(h.deps.db, acme, h.now(), {
    organizationCode: 'NS',
    name: 'Chỉ xem',
    code: 'XEM',
    permissions: ['organization:view'],
  });
  await addUser(
    h,
    {
      ...internal,
      code: 'NV002',
      username: 'binh.le',
      email: 'binh.le@acme.vn',
      name: 'Lê Văn Bình',
      phone: '0901000002',
      status: 3,
    },
    [{ organizationId: kt.id, roleId: ktHead.id }],
  );
  const viewer = await addUser(
    h,
    {
      ...internal,
      code: 'VIEWER',
      username: 'viewer',
      email: 'viewer@acme.vn',
      name: 'Viewer',
      status: 2,
    },
    [{ organizationId: ns.id, roleId: viewerRole.id }],
  );
  const viewerKey = await issueApiKey(h, {
    kind: 'organization',
    tenantId: acme.id,
    organizationId: acmeSeed.rootOrganizationId,
    userId: viewer.id,
    expiresAt: null,
  });
  h.clock.set('2026-11-26T08:00:00.000Z');
  return {
    acme,
    beta,
    acmeKey: acmeSeed.orgKey,
    betaKey: betaSeed.orgKey,
    globalKey: await globalKey(h),
    viewerKey: viewerKey.key,
  };
}

/** Inserts an organization row directly, as legacy data with a repeated code. */
export async function insertLegacyOrganization(
  h: Harness,
  tenant: TenantRow,
  code: string,
  name: string,
): Promise<number> {
  const parent = await h.deps.db
    .selectFrom('organizations')
    .select('id')
    .where('tenant_id', '=', tenant.id)
    .where('parent_id', 'is', null)
    .executeTakeFirstOrThrow();
  const row = await h.deps.db
    .insertInto('organizations')
    .values({
      tenant_id: tenant.id,
      parent_id: parent.id,
      code,
      name,
      type: 2,
      status: 1,
      address: null,
      phone: null,
      deleted_at: null,
      created_at: h.now(),
      updated_at: h.now(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A fresh harness with the directory world for one `describe`, closed after it. */
export function useDirectory(): { h: Harness; world: DirectoryWorld } {
  const context = {} as { h: Harness; world: DirectoryWorld };
  beforeAll(async () => {
    context.h = createHarness();
    context.world = await buildDirectory(context.h);
  });
  afterAll(() => context.h.close());
  return context;
}

/** Numeric id of a user by login name (tests only; the API never shows ids). */
export async function userIdOf(h: Harness, username: string): Promise<number> {
  const row = await h.deps.db
    .selectFrom('users')
    .select('id')
    .where('username', '=', username)
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Numeric id of the first organization holding `code`, in any tenant. */
export async function organizationIdOf(h: Harness, code: string): Promise<number> {
  const row = await h.deps.db
    .selectFrom('organizations')
    .select('id')
    .where('code', '=', code)
    .orderBy('id')
    .executeTakeFirstOrThrow();
  return row.id;
}
