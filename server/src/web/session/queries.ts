import type { Selectable } from 'kysely';
import type { Db } from '../../db/database';
import type { WebSessionsTable } from '../../db/schema';

export type WebSessionRow = Selectable<WebSessionsTable>;

export async function insertWebSession(
  db: Db,
  values: Omit<WebSessionRow, 'id' | 'ended_at'>,
): Promise<void> {
  await db.insertInto('web_sessions').values(values).execute();
}

/** The open session of a cookie's token hash, if any (ended or expired ones are not returned). */
export function openWebSessionByHash(
  db: Db,
  tokenHash: string,
  now: string,
): Promise<WebSessionRow | undefined> {
  return db
    .selectFrom('web_sessions')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .where('ended_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

export async function touchWebSession(db: Db, id: number, now: string): Promise<void> {
  await db.updateTable('web_sessions').set({ last_seen_at: now }).where('id', '=', id).execute();
}

export async function endWebSessionById(db: Db, id: number, now: string): Promise<void> {
  await db
    .updateTable('web_sessions')
    .set({ ended_at: now })
    .where('id', '=', id)
    .where('ended_at', 'is', null)
    .execute();
}
