import { z } from 'zod';
import { type Db, inTransaction } from '../db/database';
import { DomainError, validationError } from '../errors/domainError';
import { allPermissions, isKnownPermission } from './permissionCatalog';
import {
  findOrganizationsByCode,
  insertOrganization,
  insertRole,
  insertRolePermissions,
  insertTenant,
  type OrganizationRow,
  organizationIdByCode,
  type RoleRow,
  roleIdByName,
  type TenantRow,
  tenantIdByCode,
  updateTenant,
} from './queries';

export type { OrganizationRow, RoleRow };

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
  const matches = await findOrganizationsByCode(db, tenantId, code);
  if (matches.length === 0) {
    throw new DomainError('ORGANIZATION_CODE_NOT_FOUND', `No organization ${code} in the tenant`, {
      field,
    });
  }
  if (matches.length > 1) {
    throw new DomainError(
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
    const existing = await tenantIdByCode(trx, input.code);
    if (existing)
      throw new DomainError('TENANT_CODE_ALREADY_EXISTS', `Tenant ${input.code} already exists`);
    const tenant = await insertTenant(trx, {
      code: input.code,
      name: input.name,
      developer_email: input.developerEmail ?? null,
      developer_phone: input.developerPhone ?? null,
      created_at: now,
    });
    const root = await addOrganization(trx, tenant.id, null, now, input);
    const adminRole = await addRole(trx, tenant.id, root.id, now, {
      organizationCode: root.code,
      name: adminRoleName,
      permissions: ['*'],
    });
    return { tenant, root, adminRole };
  });
}

function addOrganization(
  db: Db,
  tenantId: number,
  parentId: number | null,
  now: string,
  input: NewOrganization,
): Promise<OrganizationRow> {
  return insertOrganization(db, {
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
  });
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
    const clash = await organizationIdByCode(trx, tenant.id, input.code);
    if (clash) {
      throw new DomainError(
        'ORGANIZATION_CODE_ALREADY_EXISTS',
        `Organization ${input.code} already exists`,
        {
          field: 'code',
        },
      );
    }
    return addOrganization(trx, tenant.id, parent.id, now, input);
  });
}

function validatePermissions(permissions: string[]): string[] {
  const unknown = permissions.filter((permission) => !isKnownPermission(permission));
  if (unknown.length > 0) {
    throw new DomainError('UNKNOWN_PERMISSION', `Unknown permission(s): ${unknown.join(', ')}`, {
      field: 'permissions',
    });
  }
  return [...new Set(permissions)];
}

async function addRole(
  db: Db,
  tenantId: number,
  organizationId: number,
  now: string,
  input: NewRole,
): Promise<RoleRow> {
  const role = await insertRole(db, {
    tenant_id: tenantId,
    organization_id: organizationId,
    code: input.code ?? defaultRoleCode,
    name: input.name,
    is_department_head: input.isDepartmentHead ? 1 : 0,
    status: 1,
    created_at: now,
    updated_at: now,
  });
  const permissions = validatePermissions(input.permissions ?? []);
  if (permissions.length > 0) await insertRolePermissions(db, role.id, permissions);
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
    const clash = await roleIdByName(trx, organization.id, input.name);
    if (clash) {
      throw new DomainError(
        'ROLE_NAME_ALREADY_EXISTS',
        `Role ${input.name} already exists in ${organization.code}`,
        {
          field: 'name',
        },
      );
    }
    return addRole(trx, tenant.id, organization.id, now, input);
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
  return updateTenant(db, tenant.id, {
    ...(developerEmail !== undefined ? { developer_email: developerEmail } : {}),
    ...(developerPhone !== undefined ? { developer_phone: developerPhone } : {}),
  });
}
