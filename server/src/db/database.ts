import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { type Migration, migrations } from './migrations';
import type { Database } from './schema';
import { StatementCache } from './statementCache';

/** What domain code queries through: the database itself or a transaction on it. */
export type Db = Kysely<Database>;

export interface OpenedDatabase {
  db: Db;
  sqlite: BetterSqlite3.Database;
  /** The prepared statements Kysely's queries reuse (see statementCache.ts). */
  statements: StatementCache;
  close(): Promise<void>;
}

/**
 * Opens (creating if needed) the SQLite file with the settings every process uses: WAL so the
 * operator CLI can write while the server reads, synchronous=FULL so a commit survives power
 * loss, foreign keys on, and a busy timeout so two processes wait for each other instead of
 * failing. Pending migrations are applied before the handle is returned.
 */
export function openDatabase(file: string): OpenedDatabase {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new BetterSqlite3(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 10000');
  const statements = new StatementCache(sqlite);
  applyMigrations(sqlite, statements);
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: statements.asKyselyDatabase() }),
  });
  return { db, sqlite, statements, close: () => db.destroy() };
}

/**
 * Applies the migrations not yet recorded, all in one IMMEDIATE transaction; when any was applied
 * the kept statements are dropped, since they were prepared against the former schema.
 */
export function applyMigrations(
  sqlite: BetterSqlite3.Database,
  statements: StatementCache,
  list: readonly Migration[] = migrations,
): void {
  sqlite.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
  );
  const migrate = sqlite.transaction(() => {
    const applied = new Set(
      sqlite
        .prepare('SELECT version FROM schema_migrations')
        .all()
        .map((row) => (row as { version: number }).version),
    );
    let changed = false;
    for (const migration of list) {
      if (applied.has(migration.version)) continue;
      changed = true;
      sqlite.exec(migration.sql);
      sqlite
        .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
        .run(migration.version, migration.name, new Date().toISOString());
    }
    return changed;
  });
  // IMMEDIATE: two processes starting together must not both try to migrate.
  if (migrate.immediate()) statements.clear();
}

/**
 * The one transaction helper. BEGIN IMMEDIATE takes the write lock up front, so a transaction
 * never fails half-way on a lock upgrade when the CLI writes at the same time. Kysely holds the
 * single connection for the whole callback, so other queries of this process wait. Never await
 * network I/O inside `work`.
 */
export async function inTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  return db.connection().execute(async (connection) => {
    await sql`BEGIN IMMEDIATE`.execute(connection);
    try {
      const result = await work(connection);
      await sql`COMMIT`.execute(connection);
      return result;
    } catch (error) {
      await sql`ROLLBACK`.execute(connection);
      throw error;
    }
  });
}
