import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../../db/database';
import type { DelegationsTable } from '../../db/schema';

export type DelegationRow = Selectable<DelegationsTable>;

export function insertDelegation(
  db: Db,
  row: Insertable<DelegationsTable>,
): Promise<DelegationRow> {
  return db.insertInto('delegations').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Revokes a delegation now; one already revoked keeps its first revocation time. */
export async function markDelegationRevoked(db: Db, id: number, now: string): Promise<void> {
  await db
    .updateTable('delegations')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
}

function delegationsWithNames(db: Db) {
  return db
    .selectFrom('delegations as g')
    .innerJoin('tenants', 'tenants.id', 'g.tenant_id')
    .innerJoin('users as f', 'f.id', 'g.from_user_id')
    .innerJoin('users as t', 't.id', 'g.to_user_id')
    .selectAll('g')
    .select([
      'tenants.code as tenant_code',
      'f.username as from_username',
      't.username as to_username',
    ]);
}

/** Every delegation of one tenant (or of all) with the login names, newest first. */
export function namedDelegations(db: Db, tenantId?: number) {
  return delegationsWithNames(db)
    .$if(tenantId !== undefined, (query) => query.where('g.tenant_id', '=', tenantId!))
    .orderBy('g.id', 'desc')
    .execute();
}

export function namedDelegation(db: Db, id: number) {
  return delegationsWithNames(db).where('g.id', '=', id).executeTakeFirst();
}

/** Users who delegated their pending tasks to `userId` at `now` (delegations in force). */
export async function activeDelegatorIds(db: Db, userId: number, now: string): Promise<number[]> {
  const rows = await db
    .selectFrom('delegations')
    .select('from_user_id')
    .where('to_user_id', '=', userId)
    .where('ends_at', '>', now)
    .where('starts_at', '<=', now)
    .where('revoked_at', 'is', null)
    .execute();
  return [...new Set(rows.map((row) => row.from_user_id))];
}
