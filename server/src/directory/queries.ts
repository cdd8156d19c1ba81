import type { Db } from '../db/database';

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
