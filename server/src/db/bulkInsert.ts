import { type Insertable, sql } from 'kysely';
import type { Db } from './database';
import { dialectOf } from './dialect';
import type { Database } from './schema';

/**
 * Bulk writes for seeding (the bench, demo data): rows typed by the schema the migrations
 * describe, so a migration that adds a required column or renames one breaks the seed at
 * compile time instead of silently. Slower per row than nothing, fast per batch: one statement
 * per chunk.
 *
 * Rows may carry their ids (a seed that links rows before writing them, with `nextRowId`). On
 * PostgreSQL an id given explicitly does not move the column's identity sequence, so the next
 * insert without an id would collide with a seeded row: `insertRows` moves the sequence past the
 * highest id after such rows. SQLite's rowid needs nothing (it takes max(rowid) + 1).
 */

/** SQLite binds at most 32,766 parameters per statement (since 3.32); stay well under. */
const parametersPerStatement = 30_000;

/** Inserts `rows` into `table` in as few statements as the parameter limit allows. */
export async function insertRows<T extends keyof Database & string>(
  db: Db,
  table: T,
  rows: readonly Insertable<Database[T]>[],
): Promise<void> {
  if (rows.length === 0) return;
  const columns = Math.max(1, Object.keys(rows[0]!).length);
  const perStatement = Math.max(1, Math.floor(parametersPerStatement / columns));
  for (let from = 0; from < rows.length; from += perStatement) {
    // The generic table defeats Kysely's per-table inference; the parameter type checks the rows.
    await db
      .insertInto(table)
      .values(rows.slice(from, from + perStatement) as never)
      .execute();
  }
  if ('id' in rows[0]! && dialectOf(db) === 'postgres') await identityPastMaxId(db, table);
}

/** PostgreSQL: the table's identity sequence continues after its highest id. */
async function identityPastMaxId(db: Db, table: string): Promise<void> {
  // setval(…, max, true): the next value handed out is max + 1. Not for an empty table (setval
  // refuses 0); a table with rows always has max(id) >= 1.
  await sql`SELECT setval(pg_get_serial_sequence(${table}, 'id'), max(id)) FROM ${sql.table(table)} HAVING max(id) IS NOT NULL`.execute(
    db,
  );
}

/**
 * The id the next row of `table` will get when the caller gives ids itself: one past the
 * highest. Only meaningful inside a transaction that is the table's only writer (a seed).
 */
export async function nextRowId(db: Db, table: keyof Database & string): Promise<number> {
  const { rows } = await sql<{
    next: number;
  }>`SELECT coalesce(max(id), 0) + 1 AS next FROM ${sql.table(table)}`.execute(db);
  return rows[0]!.next;
}
