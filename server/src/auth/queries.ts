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

export function findUserByLogin(db: Db, login: string): Promise<UserRow | undefined> {
  const key = identityKey(login);
  return db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb.or([eb('username_key', '=', key), eb('email_key', '=', key)]))
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
 * Every user a login name or e-mail names, the login-name match first. Names and e-mails are
 * unique each on their own, so this is at most two users: one whose login name is `login` and
 * another whose e-mail is.
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
