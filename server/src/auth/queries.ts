import type { Selectable } from 'kysely';
import type { Db } from '../db/database';
import type { UsersTable } from '../db/schema';

export type UserRow = Selectable<UsersTable>;

export const userStatus = { waiting: 1, active: 2, locked: 3, awaitingActivation: 4 } as const;

export function findUserById(db: Db, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Login names and e-mails are compared case-insensitively (Unicode folding, not SQLite's ASCII). */
export function identityKey(value: string): string {
  return value.normalize('NFC').trim().toLowerCase();
}

/**
 * The account a login name or e-mail names. Outside signers (external accounts) of different
 * tenants may share a login name, so a caller that knows the tenant passes it: that tenant's
 * account comes first; otherwise, and among equals, the lowest id.
 */
export function findUserByLogin(
  db: Db,
  login: string,
  preferTenantId?: number,
): Promise<UserRow | undefined> {
  const key = identityKey(login);
  return db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb.or([eb('username_key', '=', key), eb('email_key', '=', key)]))
    .$if(preferTenantId !== undefined, (query) =>
      query.orderBy((eb) =>
        eb.case().when('tenant_id', '=', preferTenantId!).then(0).else(1).end(),
      ),
    )
    .orderBy('id')
    .executeTakeFirst();
}

/** Whether an API key may still be used at `now`: it exists, is not revoked and not expired. */
export async function apiKeyIsUsable(db: Db, keyId: number, now: string): Promise<boolean> {
  const row = await db
    .selectFrom('api_keys')
    .select(['revoked_at', 'expires_at', 'kind'])
    .where('id', '=', keyId)
    .executeTakeFirst();
  return (
    row !== undefined &&
    row.kind !== 'legacy' &&
    row.revoked_at === null &&
    (row.expires_at === null || row.expires_at > now)
  );
}

/**
 * Every user a login name or e-mail names, the login-name matches first. Internal login names and
 * e-mails are unique in the system, but outside signers (external accounts) are per tenant, so
 * one citizen id may name an external account in each tenant it signs for.
 */
export async function findUsersByLogin(db: Db, login: string): Promise<UserRow[]> {
  const key = identityKey(login);
  const rows = await db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb.or([eb('username_key', '=', key), eb('email_key', '=', key)]))
    .orderBy('id')
    .execute();
  return rows.sort((a, b) => Number(b.username_key === key) - Number(a.username_key === key));
}

/** Every permission the user holds in its tenant, through the roles of its memberships. */
export async function permissionsOfUser(db: Db, userId: number): Promise<Set<string>> {
  const rows = await db
    .selectFrom('memberships')
    .innerJoin('role_permissions', 'role_permissions.role_id', 'memberships.role_id')
    .innerJoin('roles', 'roles.id', 'memberships.role_id')
    .select('role_permissions.permission')
    .where('memberships.user_id', '=', userId)
    .where('roles.status', '=', 1)
    .execute();
  return new Set(rows.map((row) => row.permission));
}

export interface Member {
  organizationCode: string | null;
  organizationName: string | null;
  roleCode: string;
  roleName: string;
}

/** Memberships of several users at once, keyed by user id (one query, not one per user). */
export async function userMembers(db: Db, userIds: number[]): Promise<Map<number, Member[]>> {
  const byUser = new Map<number, Member[]>();
  if (userIds.length === 0) return byUser;
  const rows = await db
    .selectFrom('memberships')
    .innerJoin('roles', 'roles.id', 'memberships.role_id')
    .innerJoin('organizations', 'organizations.id', 'memberships.organization_id')
    .select([
      'memberships.user_id as userId',
      'organizations.code as organizationCode',
      'organizations.name as organizationName',
      'organizations.deleted_at as organizationDeletedAt',
      'roles.code as roleCode',
      'roles.name as roleName',
    ])
    .where('memberships.user_id', 'in', userIds)
    .orderBy('memberships.created_at')
    .orderBy('organizations.code')
    .execute();
  for (const row of rows) {
    const deleted = row.organizationDeletedAt !== null;
    const list = byUser.get(row.userId) ?? [];
    list.push({
      organizationCode: deleted ? null : row.organizationCode,
      organizationName: deleted ? null : row.organizationName,
      roleCode: row.roleCode,
      roleName: row.roleName,
    });
    byUser.set(row.userId, list);
  }
  return byUser;
}
