import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { onSqlite } from '../../../test/support/onSqlite';
import { sqliteHandle } from '../../src/db/database';
import { assertDatabaseWritable } from '../../src/db/readiness';
import type { Database } from '../../src/db/schema';
import { readiness } from '../../src/operations/readiness';
import { createHarness, type Harness } from '../support/harness';

/**
 * The readiness checks on their own, where a real server cannot be made to fail them as root:
 * a database file SQLite opened read-only, a key store whose PKCS#11 module is missing. The file
 * store's failure and the TSA's are tested on the built server (startup/operations.test.ts).
 */

let h: Harness;
beforeEach(() => {
  h = createHarness();
});
afterEach(() => h.close());

function readOnly(file: string): { db: Kysely<Database>; close(): Promise<void> } {
  const sqlite = new BetterSqlite3(file, { readonly: true });
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return { db, close: () => db.destroy() };
}

onSqlite.it(
  'the database probe writes nothing: the header and the data stay as they were',
  async () => {
    const sqlite = sqliteHandle(h.runtime.database);
    sqlite.pragma('user_version = 7');
    const changes = sqlite.prepare('SELECT total_changes() AS n').get() as { n: number };
    await assertDatabaseWritable(h.deps.db);
    expect(sqlite.pragma('user_version', { simple: true })).toBe(7);
    expect(sqlite.prepare('SELECT total_changes() AS n').get()).toEqual(changes);
    expect(sqlite.inTransaction).toBe(false);
  },
);

onSqlite.it('a database SQLite can only read fails the database check, and only it', async () => {
  const ro = readOnly(h.deps.config.databaseFile);
  try {
    await expect(assertDatabaseWritable(ro.db)).rejects.toMatchObject({ code: 'SQLITE_READONLY' });
    expect(await readiness({ ...h.deps, db: ro.db })).toEqual({
      ready: false,
      checks: { database: 'failed', fileStore: 'ok', keyStore: 'ok' },
    });
  } finally {
    await ro.close();
  }
  expect(await readiness(h.deps)).toEqual({
    ready: true,
    checks: { database: 'ok', fileStore: 'ok', keyStore: 'ok' },
  });
});

it('a key store that cannot be opened fails the key store check', async () => {
  const config = {
    ...h.deps.config,
    keyStore: {
      kind: 'pkcs11' as const,
      module: '/nonexistent/libsofthsm2.so',
      tokenLabel: 'esign',
      pin: () => '1234',
    },
  };
  expect(await readiness({ ...h.deps, config })).toEqual({
    ready: false,
    checks: { database: 'ok', fileStore: 'ok', keyStore: 'failed' },
  });
});
