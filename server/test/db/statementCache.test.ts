import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { applyMigrations, type OpenedSqlite, openDatabase } from '../../src/db/database';

/**
 * Kysely's queries reuse prepared statements kept per SQL text (db/statementCache.ts), on a real
 * SQLite file: the same text is prepared once, a schema change empties the cache (a migration
 * applied to a running handle, or DDL run through Kysely), and a streamed select that holds its
 * statement does not stop the same text from running meanwhile.
 */

let dir: string;
let opened: OpenedSqlite;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-statements-'));
  opened = openDatabase(path.join(dir, 'esign.db'));
});

afterEach(async () => {
  await opened.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const tenantCodes = () => opened.db.selectFrom('tenants').select('code').orderBy('id').execute();

async function addTenant(code: string): Promise<void> {
  await opened.db
    .insertInto('tenants')
    .values({ code, name: code, created_at: '2026-01-01T00:00:00.000Z' })
    .execute();
}

describe('prepared statements kept per SQL text', () => {
  it('prepares a query once and answers every later run from the kept statement', async () => {
    const before = opened.statements.size;
    await tenantCodes();
    const kept = opened.statements.size;
    expect(kept).toBe(before + 1);
    await addTenant('A');
    await addTenant('B');
    expect(await tenantCodes()).toEqual([{ code: 'A' }, { code: 'B' }]);
    // One insert text more, the select reused: its rows reflect the inserts.
    expect(opened.statements.size).toBe(kept + 1);
  });

  it('is emptied by a migration applied to the running handle, whose new column is then read', async () => {
    await addTenant('A');
    await opened.db.selectFrom('tenants').selectAll().execute();
    expect(opened.statements.size).toBeGreaterThan(0);
    applyMigrations(opened.sqlite, opened.statements, [
      {
        version: 9001,
        name: 'test_column',
        sql: "ALTER TABLE tenants ADD COLUMN motto TEXT DEFAULT 'x'",
        postgres: "ALTER TABLE tenants ADD COLUMN motto TEXT DEFAULT 'x'",
      },
    ]);
    expect(opened.statements.size).toBe(0);
    const [row] = await opened.db.selectFrom('tenants').selectAll().execute();
    expect(row).toHaveProperty('motto', 'x');
  });

  it('leaves the cache alone when no migration was pending', async () => {
    await tenantCodes();
    const kept = opened.statements.size;
    applyMigrations(opened.sqlite, opened.statements);
    expect(opened.statements.size).toBe(kept);
  });

  it('is emptied by DDL run through Kysely', async () => {
    await tenantCodes();
    await sql`CREATE TABLE scratch (id INTEGER PRIMARY KEY)`.execute(opened.db);
    expect(opened.statements.size).toBe(0);
  });

  it('runs a text again while a streamed select of the same text is still open', async () => {
    await addTenant('A');
    await addTenant('B');
    const query = opened.db.selectFrom('tenants').select('code').orderBy('id');
    const seen: string[] = [];
    for await (const row of query.stream()) {
      seen.push(row.code);
      // The streamed statement is busy; the same text gets a statement of its own.
      expect(opened.statements.prepare(query.compile().sql).busy).toBe(false);
    }
    expect(seen).toEqual(['A', 'B']);
    expect(await query.execute()).toHaveLength(2);
  });

  it('drops the least recently used statement beyond its capacity', async () => {
    for (let n = 0; n < opened.statements.capacity + 20; n += 1) {
      await sql`SELECT ${sql.lit(n)} AS n`.execute(opened.db);
    }
    expect(opened.statements.size).toBe(opened.statements.capacity);
  });
});
