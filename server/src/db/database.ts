import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { migrations } from './migrations';
import type { Database } from './schema';

/** What domain code queries through: the database itself or a transaction on it. */
export type Db = Kysely<Database>;

export interface OpenedDatabase {
  db: Db;
  sqlite: BetterSqlite3.Database;
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
  applyMigrations(sqlite);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return { db, sqlite, close: () => db.destroy() };
}

function applyMigrations(sqlite: BetterSqlite3.Database): void {
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
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      sqlite.exec(migration.sql);
      sqlite
        .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
        .run(migration.version, migration.name, new Date().toISOString());
    }
  });
  // IMMEDIATE: two processes starting together must not both try to migrate.
  migrate.immediate();
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
