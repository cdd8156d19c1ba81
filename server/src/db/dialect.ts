import { type Kysely, PostgresAdapter, type SelectQueryBuilder, sql } from 'kysely';

/**
 * Where SQLite (the embedded default) and PostgreSQL (several instances) differ, the difference
 * is answered here and nowhere else in domain code: which one a handle talks to, how each says
 * "a unique index refused the row" and "try the transaction again", and the row locks only
 * PostgreSQL needs (SQLite has one writer at a time).
 */
export type Dialect = 'sqlite' | 'postgres';

// biome-ignore lint/suspicious/noExplicitAny: any schema; only the adapter is read.
export function dialectOf(db: Kysely<any>): Dialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/**
 * A unique index or constraint refused a row. PostgreSQL names the index (`constraint`);
 * SQLite names the columns in its message ("UNIQUE constraint failed: dossiers.document_id").
 */
export function isUniqueViolation(
  error: unknown,
  target: { index: string; columns: string },
): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message, constraint } = error as {
    code?: unknown;
    message?: unknown;
    constraint?: unknown;
  };
  if (code === '23505') return constraint === target.index;
  return (
    code === 'SQLITE_CONSTRAINT_UNIQUE' &&
    typeof message === 'string' &&
    message.includes(target.columns)
  );
}

/**
 * PostgreSQL gave up a transaction so that the ones that went on stay serializable (40001), or
 * to break a deadlock (40P01): running it again from the start is correct.
 */
export function isRetryableConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40001' || code === '40P01';
}

/**
 * The rows a claim reads are locked for the claiming transaction, and rows another instance has
 * locked are passed over (PostgreSQL's FOR UPDATE SKIP LOCKED). SQLite's writer lock already
 * serialises claims: the query is left as it is.
 */
export function lockedForClaim<Q extends SelectQueryBuilder<never, never, unknown>>(
  // biome-ignore lint/suspicious/noExplicitAny: any schema; only the adapter is read.
  db: Kysely<any>,
  query: Q,
): Q {
  return (dialectOf(db) === 'postgres' ? query.forUpdate().skipLocked() : query) as Q;
}

/**
 * The same claim's rows locked for the transaction, waiting for another instance that holds
 * one (FOR UPDATE on PostgreSQL); SQLite's writer lock already serialises: left as it is.
 */
export function lockedForUpdate<Q extends SelectQueryBuilder<never, never, unknown>>(
  // biome-ignore lint/suspicious/noExplicitAny: any schema; only the adapter is read.
  db: Kysely<any>,
  query: Q,
): Q {
  return (dialectOf(db) === 'postgres' ? query.forUpdate() : query) as Q;
}

/**
 * Notifies every instance listening on `channel` (OpenedDatabase.listen) once the transaction
 * of `trx` commits, and never if it rolls back (PostgreSQL's pg_notify; notifications with the
 * same payload in one transaction arrive once). Nothing on SQLite: one host, whose processes
 * signal in-process and poll.
 */
export async function notify(
  // biome-ignore lint/suspicious/noExplicitAny: any schema; a statement of its own.
  trx: Kysely<any>,
  channel: string,
  payload: string,
): Promise<void> {
  if (dialectOf(trx) !== 'postgres') return;
  await sql`SELECT pg_notify(${channel}, ${payload})`.execute(trx);
}
