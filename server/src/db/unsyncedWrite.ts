import { sql } from 'kysely';
import type { Db } from './database';
import { dialectOf } from './dialect';

/**
 * Runs one small write whose loss in a power cut harms nothing (a rate-limit count) without
 * waiting for the disk. On SQLite the connection commits with synchronous=FULL, an fsync per
 * commit (0.3 ms idle, 3 ms on a loaded disk here, on every request); for this write it is
 * NORMAL, which in WAL mode keeps the database consistent and leaves the write in the WAL for
 * the next FULL commit or checkpoint to make durable (a crash of the process loses nothing).
 * Kysely's single SQLite connection is held for the three statements, so no other write runs
 * under the lowered setting. Call it outside any transaction (SQLite refuses to change the
 * setting inside one: `inTransaction`'s writes are synced at its commit anyway); on a Kysely
 * transaction, and on other dialects, `work` runs as is.
 */
export async function unsyncedWrite<T>(db: Db, work: (db: Db) => Promise<T>): Promise<T> {
  if (db.isTransaction || dialectOf(db) !== 'sqlite') return work(db);
  return db.connection().execute(async (connection) => {
    const { rows } = await sql<{ synchronous: number }>`PRAGMA synchronous`.execute(connection);
    const kept = rows[0]?.synchronous ?? 2;
    await sql`PRAGMA synchronous = NORMAL`.execute(connection);
    try {
      return await work(connection);
    } finally {
      await sql.raw(`PRAGMA synchronous = ${Number(kept)}`).execute(connection);
    }
  });
}
