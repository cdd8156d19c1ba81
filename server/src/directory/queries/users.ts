import type { Insertable, Updateable } from 'kysely';
import type { UserRow } from '../../auth/queries';
import type { Db } from '../../db/database';
import type { UsersTable } from '../../db/schema';
import { type Paging, paged, searchMatches, type UpdatedBetween } from './search';

/** Users of a tenant holding `code`; two or more only in legacy data. */
export function usersWithCode(db: Db, tenantId: number, code: string): Promise<UserRow[]> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('code', '=', code)
    .orderBy('id')
    .limit(2)
    .execute();
}

export function findUserRow(db: Db, userId: number): Promise<UserRow> {
  return db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow();
}

/** Current (organization, role) pairs of one user. */
export function membershipsOf(
  db: Db,
  userId: number,
): Promise<{ organizationId: number; roleId: number }[]> {
  return db
    .selectFrom('memberships')
    .select(['organization_id as organizationId', 'role_id as roleId'])
    .where('user_id', '=', userId)
    .execute();
}

/** Root organizations of a tenant (normally one, whose code is the tenant's). */
export function rootOrganizations(
  db: Db,
  tenantId: number,
): Promise<{ id: number; code: string }[]> {
  return db
    .selectFrom('organizations')
    .select(['id', 'code'])
    .where('tenant_id', '=', tenantId)
    .where('parent_id', 'is', null)
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .execute();
}

/** Roles of one organization whose `code` or `name` equals `value`. */
export function rolesOfOrganization(
  db: Db,
  organizationId: number,
  by: 'code' | 'name',
  value: string,
): Promise<{ id: number; code: string; name: string }[]> {
  return db
    .selectFrom('roles')
    .select(['id', 'code', 'name'])
    .where('organization_id', '=', organizationId)
    .where(by, '=', value)
    .orderBy('id')
    .execute();
}

export interface UserFilter extends UpdatedBetween {
  tenantId: number;
  code?: string | undefined;
  usernameKey?: string | undefined;
  emailKey?: string | undefined;
  phone?: string | undefined;
  identityNumber?: string | undefined;
  organizationId?: number | undefined;
  roleCode?: string | undefined;
  roleName?: string | undefined;
  status?: number | undefined;
  hasCode?: boolean | undefined;
  q?: string | undefined;
}

/** Endpoint 11: users of one tenant matching every given filter, oldest first. */
export function findUsers(db: Db, filter: UserFilter, paging: Paging) {
  const byMembership =
    filter.organizationId !== undefined ||
    filter.roleCode !== undefined ||
    filter.roleName !== undefined;
  const filtered = db
    .selectFrom('users as u')
    .where('u.tenant_id', '=', filter.tenantId)
    .$if(filter.code !== undefined, (q) => q.where('u.code', '=', filter.code!))
    .$if(filter.usernameKey !== undefined, (q) =>
      q.where('u.username_key', '=', filter.usernameKey!),
    )
    .$if(filter.emailKey !== undefined, (q) => q.where('u.email_key', '=', filter.emailKey!))
    .$if(filter.phone !== undefined, (q) => q.where('u.phone', '=', filter.phone!))
    .$if(filter.identityNumber !== undefined, (q) =>
      q.where('u.identity_number', '=', filter.identityNumber!),
    )
    .$if(filter.status !== undefined, (q) => q.where('u.status', '=', filter.status!))
    .$if(filter.hasCode === true, (q) =>
      q.where('u.code', 'is not', null).where('u.code', '!=', ''),
    )
    .$if(filter.hasCode === false, (q) =>
      q.where((eb) => eb.or([eb('u.code', 'is', null), eb('u.code', '=', '')])),
    )
    .$if(byMembership, (q) =>
      q.where(({ exists, selectFrom }) =>
        exists(
          selectFrom('memberships as m')
            .innerJoin('roles as r', 'r.id', 'm.role_id')
            .select('m.user_id')
            .whereRef('m.user_id', '=', 'u.id')
            .$if(filter.organizationId !== undefined, (s) =>
              s.where('m.organization_id', '=', filter.organizationId!),
            )
            .$if(filter.roleCode !== undefined, (s) => s.where('r.code', '=', filter.roleCode!))
            .$if(filter.roleName !== undefined, (s) => s.where('r.name', '=', filter.roleName!)),
        ),
      ),
    )
    .$if(filter.q !== undefined, (q) => q.where(searchMatches('u.search_key', filter.q!)))
    .$if(filter.updatedFrom !== undefined, (q) =>
      q.where('u.updated_at', '>=', filter.updatedFrom!),
    )
    .$if(filter.updatedTo !== undefined, (q) => q.where('u.updated_at', '<=', filter.updatedTo!));
  return paged(filtered, (q) => q.selectAll('u').orderBy('u.id'), paging);
}

/** Whether a user other than `exceptUserId` holds the user code in the tenant. */
export async function userCodeTaken(
  db: Db,
  tenantId: number,
  code: string,
  exceptUserId?: number,
): Promise<boolean> {
  const query = db
    .selectFrom('users')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('code', '=', code);
  const scoped = exceptUserId === undefined ? query : query.where('id', '!=', exceptUserId);
  return (await scoped.executeTakeFirst()) !== undefined;
}

/**
 * Whether a user other than `exceptUserId` holds a folded login key as login name or e-mail.
 * `externalOfTenant` narrows the users compared to the internal ones and those of that tenant
 * (null: the external accounts without a tenant).
 */
export async function loginKeyTaken(
  db: Db,
  key: string,
  externalOfTenant: { tenantId: number | null } | undefined,
  exceptUserId?: number,
): Promise<boolean> {
  const base = db.selectFrom('users').select('id');
  const inScope =
    externalOfTenant === undefined
      ? base
      : base.where((eb) =>
          eb.or([
            eb('type', '=', 'internal'),
            externalOfTenant.tenantId === null
              ? eb('tenant_id', 'is', null)
              : eb('tenant_id', '=', externalOfTenant.tenantId),
          ]),
        );
  const query = inScope.where((eb) =>
    eb.or([eb('username_key', '=', key), eb('email_key', '=', key)]),
  );
  const scoped = exceptUserId === undefined ? query : query.where('id', '!=', exceptUserId);
  return (await scoped.executeTakeFirst()) !== undefined;
}

export function insertUserRow(db: Db, row: Insertable<UsersTable>): Promise<UserRow> {
  return db.insertInto('users').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Writes changed columns of one user. Call inside a transaction. */
export async function updateUserRow(
  db: Db,
  userId: number,
  changes: Updateable<UsersTable>,
): Promise<void> {
  await db.updateTable('users').set(changes).where('id', '=', userId).execute();
}

export async function deleteMemberships(db: Db, userId: number): Promise<void> {
  await db.deleteFrom('memberships').where('user_id', '=', userId).execute();
}

export async function insertMemberships(
  db: Db,
  userId: number,
  members: { organizationId: number; roleId: number }[],
  now: string,
): Promise<void> {
  await db
    .insertInto('memberships')
    .values(
      members.map((m) => ({
        user_id: userId,
        organization_id: m.organizationId,
        role_id: m.roleId,
        created_at: now,
      })),
    )
    .execute();
}

/** An internal user of the tenant by folded login name (signers are named by username). */
export function internalUserByLoginName(
  db: Db,
  tenantId: number,
  usernameKey: string,
): Promise<{ id: number; status: number } | undefined> {
  return db
    .selectFrom('users')
    .select(['id', 'status'])
    .where('tenant_id', '=', tenantId)
    .where('type', '=', 'internal')
    .where('username_key', '=', usernameKey)
    .executeTakeFirst();
}
