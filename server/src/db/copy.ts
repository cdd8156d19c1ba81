import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import type { Db } from './database';
import type { Database } from './schema';

/**
 * The SQL of `admin db migrate-to-postgres` (server/src/dbcopy): reading a SQLite database's
 * schema and rows, and writing and reading them back on PostgreSQL. Rows travel as arrays of
 * plain values in the order of the SQLite table's columns; both sides are read in primary-key
 * order, a page at a time (keyset pagination: never a whole table in memory). Text keys sort
 * alike on both: SQLite's BINARY collation and the C collation PostgreSQL is required to have
 * (postgres.ts) both order by code point.
 */

/** A value as both drivers give it: INTEGER (and BIGINT) as a number, BLOB (BYTEA) as a Buffer. */
export type CopyValue = string | number | Buffer | null;
export type CopyRow = CopyValue[];

export interface CopyTable {
  name: string;
  /** In the SQLite table's order. */
  columns: string[];
  /** The primary key's columns, in the key's order. */
  primaryKey: string[];
  /** The tables its foreign keys name, itself excepted. */
  references: string[];
}

/** The SQLite side: read-only, and one read transaction (a snapshot) until it is closed. */
export interface CopySource {
  /** The same connection and snapshot, for the service's own queries (audit trails, files). */
  db: Db;
  tables(): CopyTable[];
  /** The migrations applied, in order. */
  versions(): number[];
  count(table: CopyTable): number;
  /** Up to `limit` rows after the key `after` (none: from the first), in primary-key order. */
  page(table: CopyTable, after: CopyValue[] | undefined, limit: number): CopyRow[];
  /**
   * Ends the read transaction; true when another connection committed to the file since it
   * was opened (the server was running: its writes after the snapshot are not in the copy).
   */
  finish(): boolean;
  close(): Promise<void>;
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** `(a, b) > (?, ?)` on a key, for either dialect's placeholders. */
function keyAfter(key: string[], placeholders: string[]): string {
  return key.length === 1
    ? `${quoted(key[0]!)} > ${placeholders[0]}`
    : `(${key.map(quoted).join(', ')}) > (${placeholders.join(', ')})`;
}

/** Opens the SQLite file read-only and begins the read transaction every later read shares. */
export function openCopySource(file: string): CopySource {
  const sqlite = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  sqlite.pragma('busy_timeout = 10000');
  const dataVersion = () => sqlite.pragma('data_version', { simple: true }) as number;
  const openedAt = dataVersion();
  sqlite.exec('BEGIN');
  // The snapshot starts with the first read.
  sqlite.prepare('SELECT count(*) FROM sqlite_master').get();
  const pages = new Map<string, BetterSqlite3.Statement>();
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return {
    db,
    tables() {
      const names = sqlite
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
        )
        .pluck()
        .all() as string[];
      return names.map((name) => {
        const columns = sqlite.pragma(`table_info(${quoted(name)})`) as {
          name: string;
          pk: number;
        }[];
        const keys = sqlite.pragma(`foreign_key_list(${quoted(name)})`) as { table: string }[];
        return {
          name,
          columns: columns.map((column) => column.name),
          primaryKey: columns
            .filter((column) => column.pk > 0)
            .sort((a, b) => a.pk - b.pk)
            .map((column) => column.name),
          references: [...new Set(keys.map((key) => key.table))].filter((other) => other !== name),
        };
      });
    },
    versions: () =>
      sqlite
        .prepare('SELECT version FROM schema_migrations ORDER BY version')
        .pluck()
        .all() as number[],
    count: (table) =>
      sqlite
        .prepare(`SELECT count(*) FROM ${quoted(table.name)}`)
        .pluck()
        .get() as number,
    page(table, after, limit) {
      const id = `${table.name}:${after === undefined ? 'first' : 'after'}`;
      let statement = pages.get(id);
      if (statement === undefined) {
        const where =
          after === undefined
            ? ''
            : `WHERE ${keyAfter(
                table.primaryKey,
                table.primaryKey.map(() => '?'),
              )}`;
        statement = sqlite
          .prepare(
            `SELECT ${table.columns.map(quoted).join(', ')} FROM ${quoted(table.name)} ${where} ORDER BY ${table.primaryKey.map(quoted).join(', ')} LIMIT ?`,
          )
          .raw(true);
        pages.set(id, statement);
      }
      return statement.all(...(after ?? []), limit) as CopyRow[];
    },
    finish() {
      sqlite.exec('COMMIT');
      return dataVersion() !== openedAt;
    },
    close: () => db.destroy(),
  };
}

// --- The PostgreSQL side: every function takes the connection of the copy's transaction. ---

/** The base tables of the current schema with their columns, in their order. */
export async function targetTables(db: Db): Promise<Map<string, string[]>> {
  const { rows } = await sql<{ table_name: string; column_name: string }>`
    SELECT c.table_name, c.column_name
    FROM information_schema.columns c
    JOIN information_schema.tables t
      ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
    ORDER BY c.table_name, c.ordinal_position`.execute(db);
  const tables = new Map<string, string[]>();
  for (const row of rows) {
    const columns = tables.get(row.table_name) ?? [];
    columns.push(row.column_name);
    tables.set(row.table_name, columns);
  }
  return tables;
}

/** Whether `table` holds any row. */
export async function targetHasRows(db: Db, table: string): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`
    SELECT EXISTS (SELECT 1 FROM ${sql.table(table)}) AS found`.execute(db);
  return rows[0]?.found === true;
}

export async function targetVersions(db: Db): Promise<number[]> {
  const { rows } = await sql<{ version: number }>`
    SELECT version FROM schema_migrations ORDER BY version`.execute(db);
  return rows.map((row) => Number(row.version));
}

export async function targetCount(db: Db, table: string): Promise<number> {
  const { rows } = await sql<{ count: number }>`
    SELECT count(*) AS count FROM ${sql.table(table)}`.execute(db);
  return Number(rows[0]?.count ?? 0);
}

/** One INSERT of `rows` (their values in `columns` order), ids included. */
export async function insertCopiedRows(
  db: Db,
  table: string,
  columns: string[],
  rows: CopyRow[],
): Promise<void> {
  if (rows.length === 0) return;
  await sql`INSERT INTO ${sql.table(table)} (${sql.join(columns.map((column) => sql.ref(column)))})
    VALUES ${sql.join(rows.map((row) => sql`(${sql.join(row)})`))}`.execute(db);
}

/** `page` on PostgreSQL: the same rows, as arrays in `columns` order. */
export async function targetPage(
  db: Db,
  table: CopyTable,
  after: CopyValue[] | undefined,
  limit: number,
): Promise<CopyRow[]> {
  const key = sql.join(table.primaryKey.map((column) => sql.ref(column)));
  const where =
    after === undefined
      ? sql``
      : table.primaryKey.length === 1
        ? sql`WHERE ${sql.ref(table.primaryKey[0]!)} > ${after[0]}`
        : sql`WHERE (${key}) > (${sql.join(after)})`;
  const { rows } = await sql<Record<string, CopyValue>>`
    SELECT ${sql.join(table.columns.map((column) => sql.ref(column)))}
    FROM ${sql.table(table.name)} ${where} ORDER BY ${key} LIMIT ${limit}`.execute(db);
  return rows.map((row) => table.columns.map((column) => row[column] ?? null));
}

/**
 * Turns one trigger off or on again (ALTER TABLE, which PostgreSQL runs inside the transaction:
 * a rollback turns it back on). Needs the table's owner: the role that ran the migrations.
 */
export async function setTrigger(
  db: Db,
  table: string,
  trigger: string,
  enabled: boolean,
): Promise<void> {
  const action = enabled ? sql`ENABLE` : sql`DISABLE`;
  await sql`ALTER TABLE ${sql.table(table)} ${action} TRIGGER ${sql.ref(trigger)}`.execute(db);
}

/**
 * Every identity column's sequence set past the largest copied value (the next generated id
 * follows it; 1 in an empty table). Returns how many sequences were set.
 */
export async function restartIdentities(db: Db): Promise<number> {
  const { rows } = await sql<{ table_name: string; column_name: string }>`
    SELECT table_name, column_name FROM information_schema.columns
    WHERE table_schema = current_schema() AND is_identity = 'YES'
    ORDER BY table_name`.execute(db);
  for (const { table_name: table, column_name: column } of rows) {
    await sql`SELECT setval(pg_get_serial_sequence(${table}, ${column}),
        COALESCE(MAX(${sql.ref(column)}), 0) + 1, false)
      FROM ${sql.table(table)}`.execute(db);
  }
  return rows.length;
}

/**
 * Runs `work` in one transaction on one connection of `db` (READ COMMITTED: the copy is the
 * target's only writer), committing when it returns and rolling back when it throws.
 */
export async function inCopyTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  return db.connection().execute(async (connection) => {
    await sql`BEGIN`.execute(connection);
    try {
      const result = await work(connection);
      await sql`COMMIT`.execute(connection);
      return result;
    } catch (error) {
      await sql`ROLLBACK`.execute(connection).catch(() => undefined);
      throw error;
    }
  });
}
