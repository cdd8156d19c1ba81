import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../db/database';
import type { OrganizationsTable, RolesTable, TenantsTable } from '../db/schema';

export type TenantRow = Selectable<TenantsTable>;
export type OrganizationRow = Selectable<OrganizationsTable>;
export type RoleRow = Selectable<RolesTable>;

/** At most two tenants of a code: enough to tell one from several (legacy codes repeat). */
export function findTenantsByCode(db: Db, code: string): Promise<TenantRow[]> {
  return db.selectFrom('tenants').selectAll().where('code', '=', code).limit(2).execute();
}

export function tenantById(db: Db, id: number): Promise<TenantRow> {
  return db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

export function tenantCodeOf(db: Db, tenantId: number): Promise<{ code: string }> {
  return db
    .selectFrom('tenants')
    .select('code')
    .where('id', '=', tenantId)
    .executeTakeFirstOrThrow();
}

export function tenantIdByCode(db: Db, code: string): Promise<{ id: number } | undefined> {
  return db.selectFrom('tenants').select('id').where('code', '=', code).executeTakeFirst();
}

export function insertTenant(db: Db, values: Insertable<TenantsTable>): Promise<TenantRow> {
  return db.insertInto('tenants').values(values).returningAll().executeTakeFirstOrThrow();
}

export function updateTenant(
  db: Db,
  tenantId: number,
  changes: Updateable<TenantsTable>,
): Promise<TenantRow> {
  return db
    .updateTable('tenants')
    .set(changes)
    .where('id', '=', tenantId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** At most two live organizations of a code in a tenant (legacy codes repeat). */
export function findOrganizationsByCode(
  db: Db,
  tenantId: number,
  code: string,
): Promise<OrganizationRow[]> {
  return db
    .selectFrom('organizations')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('code', '=', code)
    .where('deleted_at', 'is', null)
    .limit(2)
    .execute();
}

/** Any organization holding a code in a tenant, deleted ones included: new codes must be unique. */
export function organizationIdByCode(
  db: Db,
  tenantId: number,
  code: string,
): Promise<{ id: number } | undefined> {
  return db
    .selectFrom('organizations')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('code', '=', code)
    .executeTakeFirst();
}

export function insertOrganization(
  db: Db,
  values: Insertable<OrganizationsTable>,
): Promise<OrganizationRow> {
  return db.insertInto('organizations').values(values).returningAll().executeTakeFirstOrThrow();
}

export function roleIdByName(
  db: Db,
  organizationId: number,
  name: string,
): Promise<{ id: number } | undefined> {
  return db
    .selectFrom('roles')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('name', '=', name)
    .executeTakeFirst();
}

export function insertRole(db: Db, values: Insertable<RolesTable>): Promise<RoleRow> {
  return db.insertInto('roles').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function insertRolePermissions(
  db: Db,
  roleId: number,
  permissions: string[],
): Promise<void> {
  await db
    .insertInto('role_permissions')
    .values(permissions.map((permission) => ({ role_id: roleId, permission })))
    .execute();
}

/** Registers an embedding origin; false when the tenant already had it. */
export async function insertEmbeddingOrigin(
  db: Db,
  tenantId: number,
  origin: string,
  now: string,
): Promise<boolean> {
  const inserted = await db
    .insertInto('embedding_origins')
    .values({ tenant_id: tenantId, origin, created_at: now })
    .onConflict((conflict) => conflict.columns(['tenant_id', 'origin']).doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Removes an embedding origin; false when the tenant did not have it. */
export async function deleteEmbeddingOrigin(
  db: Db,
  tenantId: number,
  origin: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('embedding_origins')
    .where('tenant_id', '=', tenantId)
    .where('origin', '=', origin)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export interface EmbeddingOriginView {
  tenantCode: string;
  origin: string;
  createdAt: string;
}

/** Registered embedding domains, optionally of one tenant. */
export function listEmbeddingOrigins(db: Db, tenantId?: number): Promise<EmbeddingOriginView[]> {
  let query = db
    .selectFrom('embedding_origins')
    .innerJoin('tenants', 'tenants.id', 'embedding_origins.tenant_id')
    .select([
      'tenants.code as tenantCode',
      'embedding_origins.origin as origin',
      'embedding_origins.created_at as createdAt',
    ])
    .orderBy('tenants.code')
    .orderBy('embedding_origins.origin');
  if (tenantId !== undefined) query = query.where('embedding_origins.tenant_id', '=', tenantId);
  return query.execute();
}
