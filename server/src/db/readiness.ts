import { sql } from 'kysely';
import type { Db } from './database';
import { dialectOf } from './dialect';

/**
 * Proves the database takes writes without changing it. SQLite: a write transaction (BEGIN IMMEDIATE,
 * the write lock) that rewrites the header's user_version with its own value, then rolls back.
 * A file opened read-only, or a lock another process keeps past the busy timeout, throws.
 */
export async function assertDatabaseWritable(db: Db): Promise<void> {
  if (dialectOf(db) === 'postgres') {
    // A transaction id is given only to a transaction that may write: a read-only standby, or
    // a server refusing writes, throws here. Nothing is written.
    await db.connection().execute(async (connection) => {
      await sql`BEGIN`.execute(connection);
      try {
        await sql`SELECT txid_current()`.execute(connection);
      } finally {
        await sql`ROLLBACK`.execute(connection);
      }
    });
    return;
  }
  await db.connection().execute(async (connection) => {
    await sql`BEGIN IMMEDIATE`.execute(connection);
    try {
      const { rows } = await sql<{ user_version: number }>`PRAGMA user_version`.execute(connection);
      const version = Number(rows[0]?.user_version ?? 0);
      await sql.raw(`PRAGMA user_version = ${version}`).execute(connection);
    } finally {
      await sql`ROLLBACK`.execute(connection);
    }
  });
}
