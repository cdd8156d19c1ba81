import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { ConfigError } from '../errors/configError';
import { DomainError } from '../errors/domainError';
import { dialectOf, isRetryableConflict } from './dialect';
import { type Migration, migrations } from './migrations';
import type { Database } from './schema';
import { StatementCache } from './statementCache';

/** What domain code queries through: the database itself or a transaction on it. */
export type Db = Kysely<Database>;

interface OpenedCommon {
  db: Db;
  /**
   * Resolves once the database answers and is migrated (PostgreSQL; SQLite is ready at once),
   * saying whether this open made it (the first start: a demo tenant may be seeded).
   */
  ready(): Promise<{ created: boolean }>;
  /**
   * A counter that moves whenever one of `tables` may have changed, by this process or another
   * (see StatementCache.watch and postgres.ts). What is derived from them is valid while it stands.
   */
  watch(tables: readonly string[]): () => number;
  /**
   * Calls `callback` with the payload of every notification on `channel` (see `notify` in
   * dialect.ts), sent by any instance, delivered once the sending transaction committed; with
   * null after the LISTEN connection was lost and made again (notifications may have been missed).
   * PostgreSQL only: on SQLite nothing is ever delivered (one host: callers keep their own
   * in-process signals and poll). Returns the unsubscribe.
   */
  listen(channel: string, callback: (payload: string | null) => void): () => void;
  close(): Promise<void>;
}

export interface OpenedSqlite extends OpenedCommon {
  dialect: 'sqlite';
  sqlite: BetterSqlite3.Database;
  /** The prepared statements Kysely's queries reuse (see statementCache.ts). */
  statements: StatementCache;
}

export interface OpenedPostgres extends OpenedCommon {
  dialect: 'postgres';
}

export type OpenedDatabase = OpenedSqlite | OpenedPostgres;

/** Where the data lives: PostgreSQL when a URL is given, else the SQLite file. */
export function openConfiguredDatabase(target: {
  databaseUrl: string | undefined;
  databaseFile: string;
}): OpenedDatabase {
  return target.databaseUrl !== undefined
    ? openPostgresDatabase(target.databaseUrl)
    : openDatabase(target.databaseFile);
}

/** A server that cannot be used at start: one line naming host and database, never the password. */
function unreachable(url: string, error: unknown): Error {
  if (error instanceof ConfigError) return error;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && /^\d/.test(code) && !code.startsWith('08')) return error as Error;
  const { hostname, port, pathname } = new URL(url);
  return new ConfigError(
    `DATABASE_URL: PostgreSQL at ${hostname}:${port || 5432}${pathname} cannot be used (${typeof code === 'string' ? code : 'error'}: ${String(message)})`,
  );
}

/** The subscribe of each opened database, by its handle (see `onNotification`). */
const listeners = new WeakMap<Db, OpenedCommon['listen']>();

/**
 * `OpenedDatabase.listen` for code that holds only the handle (`deps.db`): nothing on SQLite, or
 * on a handle that is not an opened database's own (a transaction).
 */
export function onNotification(
  db: Db,
  channel: string,
  callback: (payload: string | null) => void,
): () => void {
  return listeners.get(db)?.(channel, callback) ?? (() => undefined);
}

export function openPostgresDatabase(url: string): OpenedPostgres {
  // Loaded only here: `pg` costs a single-host (SQLite) start ~40 ms and ~15 MB it never uses.
  const { openPostgres } = require('./postgres') as typeof import('./postgres');
  const handle = openPostgres(url, migrations);
  const db = new Kysely<Database>({ dialect: handle.dialect, plugins: [handle.plugin] });
  listeners.set(db, handle.listen);
  return {
    dialect: 'postgres',
    db,
    ready: async () => {
      try {
        // The first connection runs the migrations (postgres.ts).
        await sql`SELECT 1`.execute(db);
        return { created: await handle.ready() };
      } catch (error) {
        throw unreachable(url, error);
      }
    },
    watch: handle.watch,
    listen: handle.listen,
    close: async () => {
      await handle.close();
      await db.destroy();
    },
  };
}

/**
 * Opens (creating if needed) the SQLite file with the settings every process uses: WAL so the
 * operator CLI can write while the server reads, synchronous=FULL so a commit survives power
 * loss, foreign keys on, and a busy timeout so two processes wait for each other instead of
 * failing. Pending migrations are applied before the handle is returned.
 */
export function openDatabase(file: string): OpenedSqlite {
  const created = file === ':memory:' || !fs.existsSync(file);
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
  return {
    dialect: 'sqlite',
    db,
    sqlite,
    statements,
    ready: async () => ({ created }),
    watch: (tables) => statements.watch(tables),
    listen: () => () => undefined,
    close: () => db.destroy(),
  };
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
 * The one transaction helper. Work that reads and then writes must see no other writer between
 * the two, on either database:
 * - SQLite: BEGIN IMMEDIATE takes the single write lock up front, so a transaction never fails
 *   half-way on a lock upgrade when the CLI writes at the same time; Kysely holds the single
 *   connection for the whole callback, so other queries of this process wait.
 * - PostgreSQL: SERIALIZABLE, so that the same code stays correct with several instances writing
 *   at once; a transaction PostgreSQL gives up (serialization failure, deadlock) is run again
 *   from the start, a few times, after a short random pause. `work` may therefore run more than
 *   once: it does nothing but database work (no network, no messages sent, no files removed).
 * Never await network I/O inside `work`.
 *
 * `isolation: 'read committed'` (PostgreSQL; nothing changes on SQLite) is for work whose every
 * read-then-write is guarded by a row lock it takes itself (`SELECT … FOR UPDATE [SKIP LOCKED]`)
 * and a re-check in the write: the job queue's claims and results (jobs/queue.ts says why they
 * stay correct). Such work does not collide with the transactions of other instances the way
 * SERIALIZABLE's predicate locks make it, which would abort and retry most claims made at once.
 * A deadlock is still retried.
 */
export async function inTransaction<T>(
  db: Db,
  work: (trx: Db) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  if (dialectOf(db) === 'postgres') {
    return retried(db, work, options.isolation ?? 'serializable');
  }
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

export interface TransactionOptions {
  /** PostgreSQL's isolation level; default serializable. Ignored on SQLite (one writer). */
  isolation?: 'serializable' | 'read committed';
}

/** How many times a serialization failure is retried before it reaches the caller. */
const conflictRetries = 12;

const beginStatements = {
  serializable: sql`BEGIN ISOLATION LEVEL SERIALIZABLE`,
  'read committed': sql`BEGIN ISOLATION LEVEL READ COMMITTED`,
};

async function retried<T>(
  db: Db,
  work: (trx: Db) => Promise<T>,
  isolation: NonNullable<TransactionOptions['isolation']>,
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await db.connection().execute(async (connection) => {
        await beginStatements[isolation].execute(connection);
        try {
          const result = await work(connection);
          await sql`COMMIT`.execute(connection);
          return result;
        } catch (error) {
          await sql`ROLLBACK`.execute(connection).catch(() => undefined);
          throw error;
        }
      });
    } catch (error) {
      if (!isRetryableConflict(error)) throw error;
      if (attempt >= conflictRetries) {
        // Still colliding after every retry: the caller may try again shortly (503), which is
        // what it would have to do anyway; nothing was written.
        throw new DomainError('DATABASE_BUSY', 'The service is busy: try again in a moment', {
          retryAfterSeconds: 1,
        });
      }
      // Spread the retries of transactions that collided, growing with each attempt (full
      // jitter): many writers of one row (twenty confirmations of one OTP on three instances)
      // each get through within the retries instead of colliding again at once.
      const pause = Math.random() * Math.min(1000, 10 * 2 ** attempt);
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/** The SQLite handle of an opened database, for what only SQLite has (plans, pragmas). */
export function sqliteHandle(opened: OpenedDatabase): BetterSqlite3.Database {
  if (opened.dialect !== 'sqlite') throw new Error('SQLite only: this database is PostgreSQL');
  return opened.sqlite;
}
