import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Db } from './database';
import { migrations } from './migrations';
import type { Database } from './schema';

/**
 * SQLite's online backup, and the copies it makes (server/src/backup): the SQLite-only part of
 * backing up and restoring, kept here with the rest of the SQLite code.
 */

/** The newest schema version this build knows (its last migration). */
export const newestSchemaVersion = Math.max(...migrations.map((migration) => migration.version));

/**
 * Copies the live database at `sourceFile` to `targetFile` (which must not exist) with SQLite's
 * online backup API, on a connection of its own that only reads. Every page is copied in one
 * step, so the copy is one read transaction: a consistent snapshot of the last commit before it
 * started. Under WAL the server's writes go on meanwhile (a step in several parts would start
 * over at each of them). The copy is switched to a rollback journal, so it is one file.
 */
export async function snapshotDatabase(sourceFile: string, targetFile: string): Promise<void> {
  const source = new BetterSqlite3(sourceFile, { readonly: true, fileMustExist: true });
  try {
    source.pragma('busy_timeout = 10000');
    await source.backup(targetFile, { progress: () => 0x7fffffff });
  } finally {
    source.close();
  }
  const copy = new BetterSqlite3(targetFile, { fileMustExist: true });
  try {
    copy.pragma('journal_mode = DELETE');
  } finally {
    copy.close();
  }
}

export interface DatabaseCopy {
  db: Db;
  /** `PRAGMA integrity_check`: empty when the file is sound, else SQLite's findings. */
  integrityProblems(): string[];
  /** The newest migration applied to it (0 for a file without the migrations table). */
  schemaVersion(): number;
  close(): Promise<void>;
}

/**
 * Opens a copy (a snapshot, a restored file) to read, without applying migrations: what it
 * holds is read as it is.
 */
export function openDatabaseCopy(file: string): DatabaseCopy {
  const sqlite = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return {
    db,
    integrityProblems: () => {
      const rows = sqlite.pragma('integrity_check') as { integrity_check: string }[];
      const findings = rows.map((row) => row.integrity_check);
      return findings.length === 1 && findings[0] === 'ok' ? [] : findings;
    },
    schemaVersion: () => {
      const table = sqlite
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
        .get();
      if (table === undefined) return 0;
      const row = sqlite.prepare('SELECT max(version) AS version FROM schema_migrations').get() as {
        version: number | null;
      };
      return row.version ?? 0;
    },
    close: () => db.destroy(),
  };
}
