import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { inTransaction, type OpenedSqlite, openDatabase } from '../../src/db/database';
import { unsyncedWrite } from '../../src/db/unsyncedWrite';

/** SQLite only: the one write that skips the fsync, and the setting every other write keeps. */

let dir: string;
let database: OpenedSqlite;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-unsynced-'));
  database = openDatabase(path.join(dir, 'esign.db'));
});
afterAll(async () => {
  await database.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const full = 2;
const normal = 1;
const setting = () => database.sqlite.pragma('synchronous', { simple: true });

async function settingSeenBy(db: OpenedSqlite['db']): Promise<number> {
  const { rows } = await sql<{ synchronous: number }>`PRAGMA synchronous`.execute(db);
  return rows[0]!.synchronous;
}

it('runs its work with synchronous=NORMAL and puts FULL back, also when the work throws', async () => {
  expect(setting()).toBe(full);
  expect(await unsyncedWrite(database.db, settingSeenBy)).toBe(normal);
  expect(setting()).toBe(full);
  await expect(
    unsyncedWrite(database.db, () => Promise.reject(new Error('refused'))),
  ).rejects.toThrow('refused');
  expect(setting()).toBe(full);
});

it('a write of another caller at the same time waits and commits with FULL', async () => {
  const seen: number[] = [];
  await Promise.all([
    unsyncedWrite(database.db, async (db) => {
      seen.push(await settingSeenBy(db));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }),
    inTransaction(database.db, async (trx) => {
      seen.push(await settingSeenBy(trx));
    }),
  ]);
  expect(seen).toEqual([normal, full]);
});

it('is for a write of its own: inside inTransaction SQLite refuses to change the setting', async () => {
  // Read by its message: better-sqlite3 may build its error in an earlier test file's realm,
  // where `toThrow` does not see an Error.
  const refusal: unknown = await inTransaction(database.db, (trx) =>
    unsyncedWrite(trx, settingSeenBy),
  ).then(
    () => 'no error',
    (error: unknown) => error,
  );
  expect(String((refusal as Error).message ?? refusal)).toContain(
    'Safety level may not be changed inside a transaction',
  );
  expect(setting()).toBe(full);
});
