import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/db/database';
import { foldedUpper, foldForSearch } from '../../src/db/migrations/002_directory_search';
import { foldPlain } from '../../src/db/migrations/025_plain_search';

/**
 * The operator's standard tool: Debian's `sqlite3` (3.40 on Debian 12, installed by
 * scripts/ensure-test-deps.sh) opens a database made by every migration, reads every table, and
 * its own writes fire the search-key triggers with the same folding the API's search uses.
 */

let dir: string;
let file: string;

function cli(...args: string[]): string {
  const result = spawnSync('sqlite3', ['-bail', file, ...args], { encoding: 'utf8' });
  if (result.status !== 0 || result.stderr !== '') {
    throw new Error(`sqlite3 ${args.join(' ')}: ${result.status}\n${result.stderr}`);
  }
  return result.stdout;
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-sqlite-cli-'));
  file = path.join(dir, 'esign.db');
  const opened = openDatabase(file);
  // The CLI reads the main file; the WAL is folded in first, as a stopped server leaves it.
  opened.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  await opened.close();
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("Debian's sqlite3 opens the database", () => {
  it('is the Debian tool (3.40 or later)', () => {
    const version = execFileSync('sqlite3', ['--version'], { encoding: 'utf8' });
    expect(version).toMatch(/^3\.(4\d|[5-9]\d)\./);
  });

  it('.schema prints every table and trigger without a parser error', () => {
    const schema = cli('.schema');
    expect(schema).toContain('CREATE TABLE contracts');
    for (const table of ['organizations', 'roles', 'users', 'dossiers', 'process_steps']) {
      expect(schema).toContain(`CREATE TRIGGER ${table}_search_key_insert`);
      expect(schema).toContain(`CREATE TRIGGER ${table}_search_key_update`);
    }
  });

  it('a SELECT on every table answers', () => {
    const tables = cli(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
      .split('\n')
      .filter((name) => name !== '');
    expect(tables.length).toBeGreaterThan(30);
    for (const table of tables) {
      expect(cli(`SELECT count(*) FROM "${table}"`).trim()).toMatch(/^\d+$/);
    }
  });

  it("rows written by the CLI get the API's search keys, on insert and on update", () => {
    const now = '2026-11-25T08:00:00.000Z';
    const name = `Công ty ${foldedUpper} ĐÔNG Á`;
    cli(
      [
        'PRAGMA foreign_keys = ON;',
        `INSERT INTO tenants (id, code, name, created_at) VALUES (1, 'CLI', 'CLI', '${now}');`,
        `INSERT INTO organizations (id, tenant_id, code, name, created_at, updated_at)
           VALUES (1, 1, 'ORG-Ả', '${name}', '${now}', '${now}');`,
        `INSERT INTO roles (id, tenant_id, organization_id, code, name, created_at, updated_at)
           VALUES (1, 1, 1, 'QT', 'Quản Trị', '${now}', '${now}');`,
        `INSERT INTO users (id, tenant_id, organization_id, code, username, username_key, email,
           name, status, type, created_at, updated_at)
           VALUES (1, 1, 1, 'U-1', 'Anh.Nguyen', 'anh.nguyen', 'ANH@Example.com',
           'NGUYỄN VĂN ÁNH', 2, 'internal', '${now}', '${now}');`,
        `INSERT INTO processes (id, tenant_id, organization_id, code, name, document_classes,
           created_at, updated_at) VALUES (1, 1, 1, 'P', 'P', '[]', '${now}', '${now}');`,
        `INSERT INTO process_steps (id, process_id, position, step_code, name, kind, sign_type,
           approve_label, reject_label) VALUES (1, 1, 1, 'KY', 'Khách Hàng KÝ', 'internal',
           'digital_signature', 'Ký', 'Từ chối');`,
        `INSERT INTO dossiers (id, uuid, tenant_id, organization_id, title, process_id, status,
           metadata, required_count, created_at, updated_at)
           VALUES (1, 'u-1', 1, 1, 'HỢP ĐỒNG Lao Động', 1, 'PENDING', '{}', 1, '${now}', '${now}');`,
      ].join('\n'),
    );
    const key = (table: string) => cli(`SELECT search_key FROM ${table} WHERE id = 1`).trim();
    const sep = '\u001f';
    expect(key('organizations')).toBe(`${foldForSearch(name)}${sep}org-ả`);
    expect(key('roles')).toBe(`quản trị${sep}qt`);
    expect(key('users')).toBe(['nguyễn văn ánh', 'anh@example.com', 'anh.nguyen', 'u-1'].join(sep));
    // Titles and step names are keyed without diacritics (migration 025), as foldPlain keys them.
    expect(key('process_steps')).toBe('khach hang ky');
    expect(key('dossiers')).toBe('hop dong lao dong');

    cli(
      `UPDATE users SET name = 'TRẦN THỊ BÌNH', email = NULL WHERE id = 1;
       UPDATE dossiers SET title = 'PHỤ LỤC ỨNG' WHERE id = 1;
       UPDATE process_steps SET name = '${`Duyệt ${foldedUpper}`.normalize('NFD')}' WHERE id = 1;`,
    );
    expect(key('users')).toBe(['trần thị bình', '', 'anh.nguyen', 'u-1'].join(sep));
    expect(key('dossiers')).toBe('phu luc ung');
    // Every letter of the table, and text stored decomposed, fold as the query side folds.
    expect(key('process_steps')).toBe(foldPlain(`Duyệt ${foldedUpper}`));
  });
});
