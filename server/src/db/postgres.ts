import {
  type Driver,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  PostgresDialect,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';
import pg from 'pg';
import { ConfigError } from '../errors/configError';
import type { Migration } from './migrations';

/**
 * PostgreSQL, for several instances on one database (DATABASE_URL). Kysely's own dialect over a
 * `pg` pool, with what this service needs around it:
 * - 64-bit integers (ids, sizes, counts) come back as JS numbers, as they do from SQLite; a value
 *   past 2^53 fails loudly instead of rounding.
 * - Pending migrations are applied before the first query, in ONE transaction under an advisory
 *   lock: instances starting together wait for the first, then find nothing left to do.
 * - Writes are watched per table (see `watch`), from this instance's own statements and from
 *   every instance's commits (NOTIFY from the triggers of migration 030, on a LISTEN connection).
 */

/** pg_advisory_xact_lock key of the migrations ("esign-mg"). */
const migrationLock = 0x657369676e2d6d67n;
/** The channel the write triggers notify, with the table's name as payload. */
export const writesChannel = 'esign_writes';

function safeNumber(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) && Number.isInteger(value)) {
    throw new RangeError(`A 64-bit integer from PostgreSQL does not fit a JS number: ${text}`);
  }
  return value;
}

const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    // int8 (counts, ids) and numeric (sums) as numbers.
    if (oid === 20 || oid === 1700) return safeNumber;
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

export interface PostgresHandle {
  dialect: PostgresDialect;
  plugin: KyselyPlugin;
  /** Resolves once connected and migrated (true: the schema was made now); rejects with what the server said. */
  ready(): Promise<boolean>;
  watch(tables: readonly string[]): () => number;
  /** See OpenedDatabase.listen. */
  listen(channel: string, callback: (payload: string | null) => void): () => void;
  close(): Promise<void>;
}

interface Watcher {
  tables: ReadonlySet<string>;
  count: number;
}

export function openPostgres(url: string, migrations: readonly Migration[]): PostgresHandle {
  const pool = new pg.Pool({ connectionString: url, types, max: 10, idleTimeoutMillis: 30_000 });
  // An idle client the server drops (restart, failover) must not crash the process: the pool
  // replaces it, and the next query reports the failure to its caller.
  pool.on('error', () => undefined);
  const watchers: Watcher[] = [];
  const noteWrite = (table: string | null) => {
    for (const watcher of watchers) {
      if (table === null || watcher.tables.has(table)) watcher.count += 1;
    }
  };

  /** Other channels' subscribers (see `listen`), by channel. */
  const subscribers = new Map<string, Set<(payload: string | null) => void>>();
  const deliver = (channel: string, payload: string | null) => {
    for (const callback of subscribers.get(channel) ?? []) {
      try {
        callback(payload);
      } catch {
        // A subscriber's fault stays its own.
      }
    }
  };

  let listener: pg.Client | undefined;
  let closed = false;
  /** While no LISTEN connection stands, other instances' writes go unseen: every read counts as moved. */
  let listening = false;
  const listen = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: url, types });
    client.on('notification', (message) => {
      if (message.channel === writesChannel) noteWrite(message.payload ?? null);
      else deliver(message.channel, message.payload ?? null);
    });
    let lost = false;
    let connected = false;
    // A broken or ended connection (server restart, failover, idle kill): nothing is cached
    // until a new one listens again, tried every second. (A connection that never listened is
    // retried by whoever awaited it.)
    const onLost = () => {
      if (lost || !connected) return;
      lost = true;
      listening = false;
      listener = undefined;
      noteWrite(null);
      client.end().catch(() => undefined);
      if (!closed) setTimeout(() => listen().catch(onRetryFailed), 1000).unref();
    };
    client.on('error', onLost);
    client.on('end', onLost);
    await client.connect();
    await client.query(`LISTEN ${writesChannel}`);
    for (const channel of subscribers.keys()) await client.query(`LISTEN ${quoted(channel)}`);
    connected = true;
    listener = client;
    listening = true;
    noteWrite(null);
    // What was notified while no connection listened is not replayed: subscribers look again.
    for (const channel of subscribers.keys()) deliver(channel, null);
  };

  const onRetryFailed = () => {
    if (!closed) setTimeout(() => listen().catch(onRetryFailed), 1000).unref();
  };

  let migrated: Promise<boolean> | undefined;
  const migrate = () => {
    migrated ??= applyPostgresMigrations(pool, migrations).then(async (created) => {
      await listen();
      return created;
    });
    return migrated;
  };

  // Kysely initialises its driver before the first connection is used: the migrations (and the
  // listener) run there, so nothing can query an unmigrated database.
  class MigratingDialect extends PostgresDialect {
    override createDriver(): Driver {
      const driver = super.createDriver();
      const init = driver.init.bind(driver);
      driver.init = async () => {
        await init();
        await migrate();
      };
      return driver;
    }
  }

  const written = new WeakMap<object, string>();
  const plugin: KyselyPlugin = {
    transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
      const table = writtenTable(args.node);
      if (table !== undefined) written.set(args.queryId, table);
      return args.node;
    },
    async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      const table = written.get(args.queryId);
      if (table !== undefined) noteWrite(table);
      return args.result;
    },
  };

  return {
    dialect: new MigratingDialect({ pool }),
    plugin,
    ready: migrate,
    watch(tables) {
      const watcher: Watcher = { tables: new Set(tables.map((t) => t.toLowerCase())), count: 0 };
      watchers.push(watcher);
      return () => (listening ? watcher.count : ++watcher.count);
    },
    listen(channel, callback) {
      let set = subscribers.get(channel);
      if (!set) {
        set = new Set();
        subscribers.set(channel, set);
        // A connection already listening takes the new channel; a later one LISTENs to all.
        listener?.query(`LISTEN ${quoted(channel)}`).catch(() => undefined);
      }
      set.add(callback);
      return () => {
        set.delete(callback);
      };
    },
    async close() {
      closed = true;
      await listener?.end().catch(() => undefined);
    },
  };
}

/** A channel name as a quoted identifier (channels are ours, but LISTEN takes no parameter). */
function quoted(channel: string): string {
  return `"${channel.replace(/"/g, '""')}"`;
}

/**
 * Text is compared and sorted by code point, as SQLite does: ISO timestamps, cursors and sorted
 * names must order alike on both. A database made with a linguistic collation (en_US.UTF-8…)
 * is refused at start with the command that makes a suitable one.
 */
async function assertCodePointCollation(client: pg.PoolClient): Promise<void> {
  const { rows } = await client.query<{ datcollate: string; encoding: string }>(
    'SELECT datcollate, pg_encoding_to_char(encoding) AS encoding FROM pg_database WHERE datname = current_database()',
  );
  const row = rows[0];
  if (row === undefined) return;
  const collation = row.datcollate.toLowerCase();
  if (row.encoding !== 'UTF8' || !['c', 'posix', 'c.utf-8', 'c.utf8'].includes(collation)) {
    throw new ConfigError(
      `DATABASE_URL: the database must use UTF8 and the C collation (it has ${row.encoding}, ${row.datcollate}); make it with: createdb -T template0 -E UTF8 --locale=C.UTF-8 <name>`,
    );
  }
}

/** The table an INSERT, UPDATE or DELETE built by Kysely writes, lower-cased. */
function writtenTable(node: RootOperationNode): string | undefined {
  const nameOf = (table: unknown): string | undefined => {
    const target = table as { kind?: string; table?: unknown; node?: unknown } | undefined;
    if (target?.kind === 'AliasNode') return nameOf(target.node);
    if (target?.kind === 'TableNode') {
      const identifier = (target.table as { identifier?: { name?: string } }).identifier;
      return identifier?.name?.toLowerCase();
    }
    return undefined;
  };
  if (node.kind === 'InsertQueryNode') return nameOf(node.into);
  if (node.kind === 'UpdateQueryNode') return nameOf(node.table);
  if (node.kind === 'DeleteQueryNode') return nameOf(node.from.froms[0]);
  return undefined;
}

/**
 * Applies the migrations not yet recorded, all in one transaction under an advisory lock
 * (PostgreSQL's DDL is transactional: a failure leaves the schema as it was). True when the
 * database had none: this call made the schema.
 */
export async function applyPostgresMigrations(
  pool: pg.Pool,
  list: readonly Migration[],
): Promise<boolean> {
  const client = await pool.connect();
  try {
    await assertCodePointCollation(client);
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [migrationLock.toString()]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
    );
    const applied = new Set(
      (await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map(
        (row) => Number(row.version),
      ),
    );
    for (const migration of list) {
      if (applied.has(migration.version)) continue;
      if (migration.postgres === undefined) {
        throw new Error(`Migration ${migration.version} has no PostgreSQL text`);
      }
      await client.query(migration.postgres);
      await client.query(
        'INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)',
        [migration.version, migration.name, new Date().toISOString()],
      );
    }
    await client.query('COMMIT');
    return applied.size === 0;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
