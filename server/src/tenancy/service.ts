import type { Selectable } from 'kysely';
import { z } from 'zod';
import { type Db, inTransaction } from '../db/database';
import type { OrganizationsTable, RolesTable } from '../db/schema';
import { ApiError, validationError } from '../errors/apiError';
import { allPermissions, isKnownPermission } from './permissionCatalog';
import type { TenantRow } from './resolveTenant';

export type OrganizationRow = Selectable<OrganizationsTable>;
export type RoleRow = Selectable<RolesTable>;

/** Name of the role every new tenant gets, holding every permission. */
export const adminRoleName = 'Quản trị';
/** Most roles share this code, as the spec warns: a role is identified by organization + name. */
export const defaultRoleCode = 'DEFAULT';

export interface NewOrganization {
  code: string;
  name: string;
  parentCode?: string | undefined;
  type?: number | undefined;
  address?: string | undefined;
  phone?: string | undefined;
}

export interface NewRole {
  organizationCode: string;
  name: string;
  code?: string | undefined;
  permissions?: string[] | undefined;
  isDepartmentHead?: boolean | undefined;
}

/** Resolves an organization code within a tenant, with the spec's NOT_FOUND and AMBIGUOUS errors. */
export async function organizationByCode(
  db: Db,
  tenantId: number,
  code: string,
  field = 'organizationCode',
): Promise<OrganizationRow> {
  const matches = await db
    .selectFrom('organizations')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('code', '=', code)
    .where('deleted_at', 'is', null)
    .limit(2)
    .execute();
  if (matches.length === 0) {
    throw new ApiError(
      404,
      'ORGANIZATION_CODE_NOT_FOUND',
      `No organization ${code} in the tenant`,
      { field },
    );
  }
  if (matches.length > 1) {
    throw new ApiError(
      400,
      'ORGANIZATION_CODE_AMBIGUOUS',
      `Organization code ${code} is shared by several records`,
      {
        field,
      },
    );
  }
  return matches[0]!;
}

/** A tenant: its root organization (same code) and the "Quản trị" role with every permission. */
export async function createTenant(
  db: Db,
  now: string,
  input: { code: string; name: string; developerEmail?: string; developerPhone?: string },
): Promise<{ tenant: TenantRow; root: OrganizationRow; adminRole: RoleRow }> {
  return inTransaction(db, async (trx) => {
    const existing = await trx
      .selectFrom('tenants')
      .select('id')
      .where('code', '=', input.code)
      .executeTakeFirst();
    if (existing)
      throw new ApiError(409, 'TENANT_CODE_ALREADY_EXISTS', `Tenant ${input.code} already exists`);
    const tenant = await trx
      .insertInto('tenants')
      .values({
        code: input.code,
        name: input.name,
        developer_email: input.developerEmail ?? null,
        developer_phone: input.developerPhone ?? null,
        created_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const root = await insertOrganization(trx, tenant.id, null, now, input);
    const adminRole = await insertRole(trx, tenant.id, root.id, now, {
      organizationCode: root.code,
      name: adminRoleName,
      permissions: ['*'],
    });
    return { tenant, root, adminRole };
  });
}

function insertOrganization(
  db: Db,
  tenantId: number,
  parentId: number | null,
  now: string,
  input: NewOrganization,
): Promise<OrganizationRow> {
  return db
    .insertInto('organizations')
    .values({
      tenant_id: tenantId,
      parent_id: parentId,
      code: input.code,
      name: input.name,
      type: input.type ?? 1,
      status: 1,
      address: input.address ?? null,
      phone: input.phone ?? null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A new organization under `parentCode` (the tenant root by default). New codes must be unique. */
export async function createOrganization(
  db: Db,
  tenant: TenantRow,
  now: string,
  input: NewOrganization,
): Promise<OrganizationRow> {
  return inTransaction(db, async (trx) => {
    const parent = await organizationByCode(
      trx,
      tenant.id,
      input.parentCode ?? tenant.code,
      'parentCode',
    );
    const clash = await trx
      .selectFrom('organizations')
      .select('id')
      .where('tenant_id', '=', tenant.id)
      .where('code', '=', input.code)
      .executeTakeFirst();
    if (clash) {
      throw new ApiError(
        409,
        'ORGANIZATION_CODE_ALREADY_EXISTS',
        `Organization ${input.code} already exists`,
        {
          field: 'code',
        },
      );
    }
    return insertOrganization(trx, tenant.id, parent.id, now, input);
  });
}

function validatePermissions(permissions: string[]): string[] {
  const unknown = permissions.filter((permission) => !isKnownPermission(permission));
  if (unknown.length > 0) {
    throw new ApiError(400, 'UNKNOWN_PERMISSION', `Unknown permission(s): ${unknown.join(', ')}`, {
      field: 'permissions',
    });
  }
  return [...new Set(permissions)];
}

async function insertRole(
  db: Db,
  tenantId: number,
  organizationId: number,
  now: string,
  input: NewRole,
): Promise<RoleRow> {
  const role = await db
    .insertInto('roles')
    .values({
      tenant_id: tenantId,
      organization_id: organizationId,
      code: input.code ?? defaultRoleCode,
      name: input.name,
      is_department_head: input.isDepartmentHead ? 1 : 0,
      status: 1,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const permissions = validatePermissions(input.permissions ?? []);
  if (permissions.length > 0) {
    await db
      .insertInto('role_permissions')
      .values(permissions.map((permission) => ({ role_id: role.id, permission })))
      .execute();
  }
  return role;
}

/** A role of one organization; its name is unique there. `*` grants every permission. */
export async function createRole(
  db: Db,
  tenant: TenantRow,
  now: string,
  input: NewRole,
): Promise<RoleRow> {
  return inTransaction(db, async (trx) => {
    const organization = await organizationByCode(trx, tenant.id, input.organizationCode);
    const clash = await trx
      .selectFrom('roles')
      .select('id')
      .where('organization_id', '=', organization.id)
      .where('name', '=', input.name)
      .executeTakeFirst();
    if (clash) {
      throw new ApiError(
        409,
        'ROLE_NAME_ALREADY_EXISTS',
        `Role ${input.name} already exists in ${organization.code}`,
        {
          field: 'name',
        },
      );
    }
    return insertRole(trx, tenant.id, organization.id, now, input);
  });
}

export { allPermissions };

const DeveloperContact = z.object({
  developerEmail: z.email().max(255).optional(),
  developerPhone: z
    .string()
    .regex(/^[0-9+\- ]{8,20}$/, '8 to 20 digits, +, - or spaces')
    .optional(),
});

/**
 * The developer account of a tenant: in sandbox mode every e-mail and SMS of the tenant goes
 * there instead of to signers. Checked like any input, so the CLI refuses a bad address.
 */
export function parseDeveloperContact(input: { developerEmail?: string; developerPhone?: string }) {
  const parsed = DeveloperContact.safeParse(input);
  if (!parsed.success) throw validationError(parsed.error);
  return parsed.data;
}

export async function setDeveloperContact(
  db: Db,
  tenant: TenantRow,
  contact: { developerEmail?: string; developerPhone?: string },
): Promise<TenantRow> {
  const { developerEmail, developerPhone } = parseDeveloperContact(contact);
  return db
    .updateTable('tenants')
    .set({
      ...(developerEmail !== undefined ? { developer_email: developerEmail } : {}),
      ...(developerPhone !== undefined ? { developer_phone: developerPhone } : {}),
    })
    .where('id', '=', tenant.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}
