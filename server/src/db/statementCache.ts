import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

/** Schema statements: preparing one empties the cache, since it changes what others compile to. */
const schemaChange = /^\s*(create|alter|drop)\b/i;
/**
 * Pragmas are prepared each time, never kept: SQLite checks some of them when it prepares them
 * (`synchronous` may not change inside a transaction), and a kept one would skip that check.
 */
const pragma = /^\s*pragma\b/i;

/** The table a write statement names (Kysely quotes it; hand-written SQL may not). */
const writeTarget =
  /^\s*(?:insert(?:\s+or\s+\w+)?\s+into|replace\s+into|update(?:\s+or\s+\w+)?|delete\s+from)\s+"?(\w+)"?/i;

/** What a kept text needs at each run: the statement, and the table it writes, if any. */
interface Kept {
  statement: BetterSqlite3.Statement;
  writes: string | null;
}

/** Counts possible changes to some tables: see StatementCache.watch. */
interface Watcher {
  tables: ReadonlySet<string>;
  count: number;
}

/**
 * Prepared statements kept per SQL text, at most `capacity` of them, the least recently used
 * dropped first. Kysely's SQLite driver prepares every query it runs; preparing costs about as
 * much as running a small indexed query, and a request runs the same few texts again and again.
 *
 * A statement is a cursor: one still being iterated (a streamed select) is `busy`, and asking
 * for its text again then prepares a fresh one, used once and not kept. Whether a statement
 * returns rows (`reader`) is fixed by its text, so a kept statement answers the same as a new one.
 * A schema change (`CREATE`, `ALTER`, `DROP`) empties the cache before it runs; the migrations,
 * applied outside Kysely, call `clear()` when they have changed anything.
 */
export class StatementCache {
  readonly #statements = new Map<string, Kept>();
  readonly #sqlite: BetterSqlite3.Database;
  readonly #watchers: Watcher[] = [];
  readonly #dataVersion: BetterSqlite3.Statement;
  #lastDataVersion: number;
  readonly capacity: number;

  constructor(sqlite: BetterSqlite3.Database, capacity = 500) {
    this.#sqlite = sqlite;
    this.capacity = capacity;
    this.#dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
    this.#lastDataVersion = this.#readDataVersion();
  }

  /**
   * The kept statement for `text`, or a new one (kept unless it changes the schema). Kysely asks
   * for a statement each time it runs a query, so this is also where writes are seen.
   */
  prepare(text: string): BetterSqlite3.Statement {
    const kept = this.#statements.get(text);
    if (kept !== undefined && !kept.statement.busy) {
      // Most recently used last: a Map iterates in insertion order.
      this.#statements.delete(text);
      this.#statements.set(text, kept);
      if (kept.writes !== null) this.#noteWrite(kept.writes);
      return kept.statement;
    }
    if (pragma.test(text)) return this.#sqlite.prepare(text);
    if (schemaChange.test(text)) {
      this.clear();
      return this.#sqlite.prepare(text);
    }
    const writes = writeTarget.exec(text)?.[1]?.toLowerCase() ?? null;
    if (writes !== null) this.#noteWrite(writes);
    const statement = this.#sqlite.prepare(text);
    if (kept !== undefined) return statement;
    this.#statements.set(text, { statement, writes });
    if (this.#statements.size > this.capacity) {
      const oldest = this.#statements.keys().next().value;
      if (oldest !== undefined) this.#statements.delete(oldest);
    }
    return statement;
  }

  /** Forgets every kept statement, and moves every watch: the schema changed. */
  clear(): void {
    this.#statements.clear();
    this.#noteWrite(null);
  }

  /**
   * A counter that moves whenever one of `tables` may have changed: a write statement of this
   * process naming one of them (counted when it is about to run, so before it commits), a schema
   * change, or a commit by another connection to the file (the operator CLI; SQLite's
   * `data_version`). What is derived from those tables stays valid while the counter stands still.
   */
  watch(tables: readonly string[]): () => number {
    const watcher: Watcher = { tables: new Set(tables.map((t) => t.toLowerCase())), count: 0 };
    this.#watchers.push(watcher);
    return () => {
      const dataVersion = this.#readDataVersion();
      if (dataVersion !== this.#lastDataVersion) {
        this.#lastDataVersion = dataVersion;
        for (const each of this.#watchers) each.count += 1;
      }
      return watcher.count;
    };
  }

  /** A write to `table` (null: the schema) is about to run. */
  #noteWrite(table: string | null): void {
    for (const watcher of this.#watchers) {
      if (table === null || watcher.tables.has(table)) watcher.count += 1;
    }
  }

  #readDataVersion(): number {
    return this.#dataVersion.get() as number;
  }

  get size(): number {
    return this.#statements.size;
  }

  /** What Kysely's SQLite dialect is given instead of the bare handle. */
  asKyselyDatabase(): SqliteDatabase {
    return {
      prepare: (text) => this.prepare(text),
      close: () => {
        this.#statements.clear();
        this.#sqlite.close();
      },
    };
  }
}
