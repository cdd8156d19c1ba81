import { sql } from 'kysely';
import type { OpenedDatabase } from '../../src/db/database';

/**
 * What tests do to the database behind the service's back, on either dialect: a trigger that
 * makes one kind of write fail (to prove a multi-step write leaves nothing behind), and raw
 * statements run with a table's append-only triggers lifted (as an attacker holding the
 * database could).
 */

type Event = 'INSERT' | 'UPDATE' | 'DELETE';

/** Makes every `event` on `table` fail with `message` until the returned function is called. */
export async function forceFailure(
  database: OpenedDatabase,
  options: { table: string; event: Event; message: string; timing?: 'BEFORE' | 'AFTER' },
): Promise<() => Promise<void>> {
  const { table, event, message } = options;
  const timing = options.timing ?? 'BEFORE';
  const name = `forced_failure_${table}`;
  const quoted = message.replaceAll("'", "''");
  if (database.dialect === 'sqlite') {
    database.sqlite.exec(`CREATE TRIGGER ${name} ${timing} ${event} ON ${table}
      BEGIN SELECT RAISE(ABORT, '${quoted}'); END`);
    return async () => {
      database.sqlite.exec(`DROP TRIGGER ${name}`);
    };
  }
  await sql
    .raw(
      `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION '${quoted}'; END; $$;
      CREATE TRIGGER ${name} ${timing} ${event} ON ${table} FOR EACH ROW EXECUTE FUNCTION ${name}();`,
    )
    .execute(database.db);
  return async () => {
    await sql
      .raw(`DROP TRIGGER ${name} ON ${table}; DROP FUNCTION ${name}();`)
      .execute(database.db);
  };
}

/** Runs `statement` with `table`'s append-only triggers (`<table>_no_update`, `_no_delete`) lifted. */
export async function withoutAppendOnly(
  database: OpenedDatabase,
  table: string,
  statement: string,
): Promise<void> {
  if (database.dialect === 'sqlite') {
    const { sqlite } = database;
    const saved = sqlite
      .prepare(
        `SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name IN ('${table}_no_update', '${table}_no_delete')`,
      )
      .all() as { sql: string }[];
    sqlite.exec(`DROP TRIGGER ${table}_no_update`);
    sqlite.exec(`DROP TRIGGER ${table}_no_delete`);
    try {
      sqlite.exec(statement);
    } finally {
      for (const trigger of saved) sqlite.exec(trigger.sql);
    }
    return;
  }
  await sql
    .raw(
      `ALTER TABLE ${table} DISABLE TRIGGER ${table}_no_update;
       ALTER TABLE ${table} DISABLE TRIGGER ${table}_no_delete;`,
    )
    .execute(database.db);
  try {
    await sql.raw(statement).execute(database.db);
  } finally {
    await sql
      .raw(
        `ALTER TABLE ${table} ENABLE TRIGGER ${table}_no_update;
         ALTER TABLE ${table} ENABLE TRIGGER ${table}_no_delete;`,
      )
      .execute(database.db);
  }
}

/**
 * Runs one raw statement on either dialect; rejects with the database's message as an Error of
 * this realm (better-sqlite3 may build its error in an earlier test file's realm, where jest's
 * `rejects.toThrow` does not see an Error).
 */
export async function runRaw(database: OpenedDatabase, statement: string): Promise<void> {
  try {
    await sql.raw(statement).execute(database.db);
  } catch (error) {
    throw new Error(String((error as { message?: unknown } | null)?.message ?? error));
  }
}
