import { type UserRow, userStatus } from '../../auth/queries';
import type { Db } from '../../db/database';

/** Roles the user holds through its memberships (holders of a role see its role-based turns). */
export async function roleIdsOf(db: Db, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('memberships')
    .select('role_id')
    .where('user_id', '=', userId)
    .execute();
  return rows.map((row) => row.role_id);
}

export function roleName(db: Db, roleId: number): Promise<{ name: string } | undefined> {
  return db.selectFrom('roles').select('name').where('id', '=', roleId).executeTakeFirst();
}

export function usersByIds(db: Db, userIds: number[]): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().where('id', 'in', userIds).execute();
}

/** Who may take an untaken role turn: every holder of the role whose account is not locked. */
export function unlockedRoleHolders(db: Db, roleId: number): Promise<UserRow[]> {
  return db
    .selectFrom('users')
    .selectAll('users')
    .where('users.status', '!=', userStatus.locked)
    .where('users.id', 'in', (eb) =>
      eb.selectFrom('memberships').select('user_id').where('role_id', '=', roleId),
    )
    .orderBy('users.id')
    .execute();
}
