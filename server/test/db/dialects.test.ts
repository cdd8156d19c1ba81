import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { type PostgresCluster, startPostgresCluster } from '../../../test/support/postgres';
import { migrations } from '../../src/db/migrations';
import { foldForSearch } from '../../src/db/migrations/002_directory_search';
import { foldPlain } from '../../src/db/migrations/025_plain_search';

/**
 * One schema, two dialects: every migration's SQLite text (`sql`) on a SQLite file and its
 * PostgreSQL text (`postgres`) on a real PostgreSQL 15 cluster, version by version. After each
 * version both have the same tables, columns (order, type by the convention, nullability,
 * default), keys, foreign keys, CHECK counts, indexes and triggers; then the same rows written on
 * both get the same search keys (byte for byte, Vietnamese and the rest), the same waiting-turn
 * columns and the same contract types, and the append-only tables refuse changes on both.
 */

type Row = Record<string, unknown>;

/** A database of either dialect, spoken to in SQL with `?` placeholders. */
interface Side {
  dialect: 'sqlite' | 'postgres';
  all(sql: string, params?: readonly unknown[]): Promise<Row[]>;
}

interface TableShape {
  /** `name type [not null] [default …] [identity]`, in column order. */
  columns: string[];
  primaryKey: string[];
  /** Column lists of UNIQUE constraints, sorted. */
  uniques: string[];
  /** `columns -> table(columns) on delete …`, sorted. */
  foreignKeys: string[];
  checks: number;
}

interface IndexShape {
  table: string;
  unique: boolean;
  partial: boolean;
  columns: string[];
}

interface SchemaShape {
  tables: Record<string, TableShape>;
  indexes: Record<string, IndexShape>;
  /** Trigger names by table, sorted. */
  triggers: Record<string, string[]>;
}

const sqliteTypes: Record<string, string> = {
  INTEGER: 'integer',
  TEXT: 'text',
  BLOB: 'blob',
  REAL: 'real',
};
const postgresTypes: Record<string, string> = {
  bigint: 'integer',
  text: 'text',
  bytea: 'blob',
  'double precision': 'real',
};
const onDelete: Record<string, string> = {
  a: 'NO ACTION',
  r: 'RESTRICT',
  c: 'CASCADE',
  n: 'SET NULL',
  d: 'SET DEFAULT',
};

function column(
  name: string,
  type: string | undefined,
  notNull: boolean,
  defaultValue: string | null,
  identity: boolean,
): string {
  return [
    name,
    type ?? '?',
    notNull ? 'not null' : '',
    defaultValue === null ? '' : `default ${defaultValue}`,
    identity ? 'identity' : '',
  ]
    .filter((part) => part !== '')
    .join(' ');
}

function addTrigger(shape: SchemaShape, table: string, name: string): void {
  shape.triggers[table] = [...(shape.triggers[table] ?? []), name];
}

function sqliteShape(sqlite: Database.Database): SchemaShape {
  const shape: SchemaShape = { tables: {}, indexes: {}, triggers: {} };
  const tables = sqlite
    .prepare(
      "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .all() as { name: string; sql: string }[];
  for (const { name: table, sql } of tables) {
    const info = sqlite.pragma(`table_info(${table})`) as {
      name: string;
      type: string;
      notnull: number;
      dflt_value: string | null;
      pk: number;
    }[];
    const primaryKey = info
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name);
    const rowidAlias = primaryKey.length === 1 ? info.find((c) => c.pk === 1) : undefined;
    const indexList = sqlite.pragma(`index_list(${table})`) as {
      name: string;
      unique: number;
      origin: string;
      partial: number;
    }[];
    const indexColumns = (index: string): string[] =>
      (sqlite.pragma(`index_xinfo(${index})`) as { name: string | null; key: number }[])
        .filter((c) => c.key === 1)
        .map((c) => c.name ?? '<expression>');
    const foreignKeys = new Map<
      number,
      { table: string; from: string[]; to: string[]; onDelete: string }
    >();
    for (const fk of sqlite.pragma(`foreign_key_list(${table})`) as {
      id: number;
      table: string;
      from: string;
      to: string;
      on_delete: string;
    }[]) {
      const entry = foreignKeys.get(fk.id) ?? {
        table: fk.table,
        from: [],
        to: [],
        onDelete: fk.on_delete,
      };
      entry.from.push(fk.from);
      entry.to.push(fk.to);
      foreignKeys.set(fk.id, entry);
    }
    shape.tables[table] = {
      columns: info.map((c) =>
        column(
          c.name,
          sqliteTypes[c.type],
          c.notnull === 1 || c.pk > 0,
          c.dflt_value,
          c === rowidAlias && c.type === 'INTEGER',
        ),
      ),
      primaryKey,
      uniques: indexList
        .filter((index) => index.origin === 'u')
        .map((index) => indexColumns(index.name).join(','))
        .sort(),
      foreignKeys: [...foreignKeys.values()]
        .map(
          (fk) =>
            `${fk.from.join(',')} -> ${fk.table}(${fk.to.join(',')}) on delete ${fk.onDelete}`,
        )
        .sort(),
      checks: sql.match(/\bCHECK\s*\(/gi)?.length ?? 0,
    };
    for (const index of indexList.filter((i) => i.origin === 'c')) {
      shape.indexes[index.name] = {
        table,
        unique: index.unique === 1,
        partial: index.partial === 1,
        columns: indexColumns(index.name),
      };
    }
  }
  for (const trigger of sqlite
    .prepare("SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
    .all() as { name: string; tbl_name: string }[]) {
    addTrigger(shape, trigger.tbl_name, trigger.name);
  }
  return shape;
}

async function postgresShape(client: pg.Client): Promise<SchemaShape> {
  const shape: SchemaShape = { tables: {}, indexes: {}, triggers: {} };
  const columns = await client.query<{
    table_name: string;
    column_name: string;
    data_type: string;
    is_nullable: string;
    column_default: string | null;
    is_identity: string;
  }>(`SELECT table_name, column_name, data_type, is_nullable, column_default, is_identity
      FROM information_schema.columns c
      WHERE table_schema = 'public' AND EXISTS (
        SELECT 1 FROM information_schema.tables t WHERE t.table_schema = 'public'
          AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE')
      ORDER BY table_name, ordinal_position`);
  for (const c of columns.rows) {
    const table = shape.tables[c.table_name] ?? {
      columns: [],
      primaryKey: [],
      uniques: [],
      foreignKeys: [],
      checks: 0,
    };
    shape.tables[c.table_name] = table;
    table.columns.push(
      column(
        c.column_name,
        postgresTypes[c.data_type],
        c.is_nullable === 'NO',
        c.column_default?.replace(/::[a-z ]+$/, '') ?? null,
        c.is_identity === 'YES',
      ),
    );
  }
  const constraints = await client.query<{
    table: string;
    kind: string;
    columns: string[];
    ref_table: string | null;
    ref_columns: string[];
    on_delete: string;
  }>(`SELECT t.relname AS table, c.contype AS kind,
        ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, n)
              JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
              ORDER BY k.n) AS columns,
        f.relname AS ref_table,
        ARRAY(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY AS k(attnum, n)
              JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum
              ORDER BY k.n) AS ref_columns,
        c.confdeltype AS on_delete
      FROM pg_constraint c
      JOIN pg_class t ON t.oid = c.conrelid
      JOIN pg_namespace s ON s.oid = t.relnamespace
      LEFT JOIN pg_class f ON f.oid = c.confrelid
      WHERE s.nspname = 'public'
      ORDER BY c.conname`);
  for (const c of constraints.rows) {
    const table = shape.tables[c.table];
    if (table === undefined) continue;
    if (c.kind === 'p') table.primaryKey = c.columns;
    if (c.kind === 'u') table.uniques.push(c.columns.join(','));
    if (c.kind === 'c') table.checks += 1;
    if (c.kind === 'f') {
      table.foreignKeys.push(
        `${c.columns.join(',')} -> ${c.ref_table}(${c.ref_columns.join(',')}) on delete ${onDelete[c.on_delete]}`,
      );
    }
  }
  for (const table of Object.values(shape.tables)) {
    table.uniques.sort();
    table.foreignKeys.sort();
  }
  const indexes = await client.query<{
    name: string;
    table: string;
    unique: boolean;
    partial: boolean;
    columns: string[];
  }>(`SELECT i.relname AS name, t.relname AS table, x.indisunique AS unique,
        x.indpred IS NOT NULL AS partial,
        ARRAY(SELECT CASE WHEN k.attnum = 0 THEN '<expression>' ELSE a.attname::text END
              FROM unnest(x.indkey) WITH ORDINALITY AS k(attnum, n)
              LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
              ORDER BY k.n) AS columns
      FROM pg_index x
      JOIN pg_class i ON i.oid = x.indexrelid
      JOIN pg_class t ON t.oid = x.indrelid
      JOIN pg_namespace s ON s.oid = t.relnamespace
      WHERE s.nspname = 'public'
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)
      ORDER BY i.relname`);
  for (const { name, ...index } of indexes.rows) shape.indexes[name] = index;
  const triggers = await client.query<{ table: string; name: string }>(
    `SELECT c.relname AS table, t.tgname AS name
      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
      JOIN pg_namespace s ON s.oid = c.relnamespace
      WHERE s.nspname = 'public' AND NOT t.tgisinternal
      ORDER BY t.tgname`,
  );
  // Migration 030's write notifications exist on PostgreSQL only (several instances' caches).
  for (const { table, name } of triggers.rows) {
    if (!name.endsWith('_notify_write')) addTrigger(shape, table, name);
  }
  return shape;
}

/** Sorted keys, so that a difference reads as one in jest's diff. */
function sorted<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}

function normalised(shape: SchemaShape): SchemaShape {
  return {
    tables: sorted(shape.tables),
    indexes: sorted(shape.indexes),
    triggers: sorted(
      Object.fromEntries(Object.entries(shape.triggers).map(([t, n]) => [t, [...n].sort()])),
    ),
  };
}

/** int8 read as a JS number, as the server's driver does. */
const int8AsNumber = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
};

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, types: int8AsNumber });
  await client.connect();
  return client;
}

/** Applies one migration's PostgreSQL text in a transaction of its own. */
async function applyPostgres(client: pg.Client, text: string): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(text);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}

function createDatabase(cluster: PostgresCluster, name: string): string {
  execFileSync('psql', [`${cluster.baseUrl}/postgres`, '-qXc', `CREATE DATABASE ${name}`]);
  return `${cluster.baseUrl}/${name}`;
}

let cluster: PostgresCluster;
let dir: string;
let sqlite: Database.Database;
let client: pg.Client;
let sides: Side[];

beforeAll(async () => {
  cluster = await startPostgresCluster();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-dialects-'));
  sqlite = new Database(path.join(dir, 'esign.db'));
  sqlite.pragma('foreign_keys = ON');
  client = await connect(createDatabase(cluster, 'dialects'));
  sides = [
    {
      dialect: 'sqlite',
      async all(sql, params = []) {
        const statement = sqlite.prepare(sql);
        if (statement.reader) return statement.all(...params) as Row[];
        statement.run(...params);
        return [];
      },
    },
    {
      dialect: 'postgres',
      async all(sql, params = []) {
        let n = 0;
        const text = sql.replace(/\?/g, () => `$${++n}`);
        return (await client.query(text, [...params])).rows as Row[];
      },
    },
  ];
}, 120_000);

afterAll(async () => {
  await client?.end();
  sqlite?.close();
  cluster?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** The same statement on both sides; both must give the same rows, which are returned. */
async function both(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
  const [fromSqlite, fromPostgres] = await Promise.all(sides.map((side) => side.all(sql, params)));
  expect({ sql, rows: fromPostgres }).toEqual({ sql, rows: fromSqlite });
  return fromSqlite!;
}

/** The statement must fail on both sides with a message matching `message`. */
async function refusedOnBoth(
  sql: string,
  params: readonly unknown[],
  message: RegExp,
): Promise<void> {
  for (const side of sides) {
    // Read by its message: better-sqlite3 may build its error in an earlier test file's realm
    // (its addon keeps the first constructor it was given), where `toThrow` does not see an Error.
    const refusal: unknown = await side.all(sql, params).then(
      () => 'no error',
      (error: unknown) => error,
    );
    expect({
      dialect: side.dialect,
      message: String((refusal as Error).message ?? refusal),
    }).toEqual({
      dialect: side.dialect,
      message: expect.stringMatching(message),
    });
  }
}

const now = '2024-05-01T08:00:00.000Z';
const later = '2024-05-02T09:30:00.000Z';

describe('SQLite and PostgreSQL migrations', () => {
  it('give the same schema after every version', async () => {
    for (const migration of migrations) {
      sqlite.transaction(() => sqlite.exec(migration.sql))();
      await applyPostgres(client, migration.postgres);
      const expected = normalised(sqliteShape(sqlite));
      const actual = normalised(await postgresShape(client));
      expect({ version: migration.version, ...actual }).toEqual({
        version: migration.version,
        ...expected,
      });
    }
    // The comparison is not vacuous: the schema at the end has what the server reads.
    const final = normalised(sqliteShape(sqlite));
    expect(Object.keys(final.tables).length).toBeGreaterThan(35);
    expect(final.tables.signing_sessions!.columns.slice(0, 9)).toEqual([
      'id integer not null identity',
      'public_id text not null',
      'tenant_id integer not null',
      'contract_id integer',
      'signer_id integer',
      'task_id integer',
      'user_id integer',
      'file_id integer',
      'method text not null',
    ]);
    expect(final.triggers.turns).toEqual(['turns_insert_waiting', 'turns_task_waiting']);
  }, 120_000);

  it('write the same search keys, folded as the query side folds', async () => {
    {
      const [tenant] = await both(
        'INSERT INTO tenants (code, name, created_at) VALUES (?, ?, ?) RETURNING id',
        ['BTC', 'Bộ Tài chính', now],
      );
      // The tenant trigger gave it contract type 1 on both.
      await both('SELECT tenant_id, type_number, name, created_at FROM contract_types ORDER BY id');
      const organizations: [string, string][] = [
        ['Sở Tài Chính ĐÀ NẴNG', 'STC-ĐN'],
        ['Nguyễn Văn Ánh'.normalize('NFD'), 'Decomposed'],
        ['ÆØÅ Ñandú Çédille ÞÐ ß ÿŸ Œuvre Ĳssel', 'LATIN'],
        ['MiXeD CaSe ỲỴỶỸ ƠƯ ẠẢẤẦ', 'Mix'],
        // Outside the table: SQLite's lower() leaves them; so must PostgreSQL (its lower() would not).
        ['ΑΒΓ Ǆ İ Ǎ ẞ Ж', 'OTHER'],
      ];
      const organizationIds: number[] = [];
      for (const [name, code] of organizations) {
        const [row] = await both(
          'INSERT INTO organizations (tenant_id, code, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING id',
          [tenant!.id, code, name, now, now],
        );
        organizationIds.push(row!.id as number);
      }
      const [role] = await both(
        'INSERT INTO roles (tenant_id, organization_id, code, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id',
        [tenant!.id, organizationIds[0], 'TP-KH', 'Trưởng Phòng Kế Hoạch', now, now],
      );
      const [user] = await both(
        `INSERT INTO users (tenant_id, organization_id, code, username, username_key, email, email_key,
           name, status, type, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, 'internal', ?, ?) RETURNING id`,
        [
          tenant!.id,
          organizationIds[0],
          null,
          'DAO.NGUYEN',
          'dao.nguyen',
          'Đào.Nguyễn@Example.VN',
          'đào.nguyễn@example.vn',
          'Nguyễn Thị Ðào',
          now,
          now,
        ],
      );
      await both(
        `INSERT INTO users (username, username_key, status, type, created_at, updated_at)
         VALUES ('admin', 'admin', 1, 'internal', ?, ?)`,
        [now, now],
      );
      // Updates: of a searchable column (key follows), of another (key stays), to NULL.
      await both('UPDATE organizations SET name = ? WHERE id = ?', [
        'Ủy Ban Nhân Dân TỈNH',
        organizationIds[3],
      ]);
      await both('UPDATE organizations SET address = ? WHERE id = ?', [
        'Hà Nội',
        organizationIds[0],
      ]);
      await both('UPDATE users SET code = ?, name = NULL WHERE id = ?', ['Ư-01', user!.id]);

      const directory = {
        organizations: await both('SELECT id, search_key FROM organizations ORDER BY id'),
        roles: await both('SELECT id, search_key FROM roles ORDER BY id'),
        users: await both('SELECT id, search_key FROM users ORDER BY id'),
      };
      const keyOf = (...parts: string[]) => parts.map(foldForSearch).join('\u001f');
      expect(directory.organizations[0]!.search_key).toBe(keyOf('Sở Tài Chính ĐÀ NẴNG', 'STC-ĐN'));
      expect(directory.organizations[3]!.search_key).toBe(keyOf('Ủy Ban Nhân Dân TỈNH', 'Mix'));
      expect(directory.organizations[4]!.search_key).toBe('ΑΒΓ Ǆ İ Ǎ ẞ Ж\u001fother');
      expect(directory.roles[0]!.search_key).toBe(keyOf('Trưởng Phòng Kế Hoạch', 'TP-KH'));
      expect(directory.users[0]!.search_key).toBe(
        keyOf('', 'Đào.Nguyễn@Example.VN', 'DAO.NGUYEN', 'Ư-01'),
      );
      expect(directory.users[1]!.search_key).toBe(keyOf('', '', 'admin', ''));

      // Dossiers and steps: the plain folding (no diacritics) of migration 025.
      const [process] = await both(
        `INSERT INTO processes (tenant_id, organization_id, code, name, document_classes, created_at, updated_at)
         VALUES (?, ?, 'QT1', 'Quy trình', '[]', ?, ?) RETURNING id`,
        [tenant!.id, organizationIds[0], now, now],
      );
      const [step] = await both(
        `INSERT INTO process_steps (process_id, position, step_code, name, kind, sign_type, approve_label, reject_label)
         VALUES (?, 1, 'B1', ?, 'internal', 'digital_signature', 'Duyệt', 'Từ chối') RETURNING id`,
        [process!.id, 'Phê duyệt của GIÁM ĐỐC'],
      );
      const titles = [
        'Hợp đồng mua bán Điện năng',
        'QUYẾT ĐỊNH bổ nhiệm Đỗ Thị Ngọc'.normalize('NFD'),
        'Ærøskøbing Ŀŀ ĳ Ñ Þór ΑΒΓ',
      ];
      const dossierIds: number[] = [];
      for (const [index, title] of titles.entries()) {
        const [row] = await both(
          `INSERT INTO dossiers (uuid, tenant_id, organization_id, title, process_id, status, metadata,
             required_count, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, 'IN_PROGRESS', '{}', 1, ?, ?) RETURNING id`,
          [`uuid-${index}`, tenant!.id, organizationIds[index], title, process!.id, now, now],
        );
        dossierIds.push(row!.id as number);
      }
      const dossierKeys = await both('SELECT id, search_key FROM dossiers ORDER BY id');
      expect(dossierKeys.map((row) => row.search_key)).toEqual([
        foldPlain(titles[0]!),
        foldPlain(titles[1]!),
        'ærøskøbing ŀŀ ĳ n þor ΑΒΓ',
      ]);
      expect(dossierKeys[1]!.search_key).toBe('quyet dinh bo nhiem do thi ngoc');
      await both('UPDATE process_steps SET name = ? WHERE id = ?', [
        'Ký số của Phó Giám đốc',
        step!.id,
      ]);
      expect(await both('SELECT search_key FROM process_steps')).toEqual([
        { search_key: 'ky so cua pho giam doc' },
      ]);

      // Waiting turns (migrations 026/027): a turn follows its task's state and keys.
      const addTask = async (code: string, organization: number, status: number) =>
        (
          await both(
            `INSERT INTO tasks (code, tenant_id, organization_id, dossier_id, step_id, status, assigned_at)
             VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
            [code, tenant!.id, organization, dossierIds[0], step!.id, status, now],
          )
        )[0]!.id as number;
      const waiting = await addTask('T-1', organizationIds[0]!, 1);
      const done = await addTask('T-2', organizationIds[1]!, 2);
      const turnsOf = () =>
        both(
          `SELECT id, task_id, task_waiting, task_tenant_id, task_organization_id, task_assigned_at
           FROM turns ORDER BY id`,
        );
      for (const [order, task] of [waiting, done, null].entries()) {
        await both(
          `INSERT INTO turns (dossier_id, step_id, step_position, turn_order, task_id, status, assignee_user_id, role_id)
           VALUES (?, ?, 1, ?, ?, 'ACTIVE', ?, ?)`,
          [dossierIds[0], step!.id, order + 1, task, order === 2 ? null : user!.id, role!.id],
        );
      }
      const t = tenant!.id as number;
      expect(await turnsOf()).toEqual([
        {
          id: 1,
          task_id: waiting,
          task_waiting: 1,
          task_tenant_id: t,
          task_organization_id: organizationIds[0],
          task_assigned_at: now,
        },
        {
          id: 2,
          task_id: done,
          task_waiting: 0,
          task_tenant_id: t,
          task_organization_id: organizationIds[1],
          task_assigned_at: now,
        },
        {
          id: 3,
          task_id: null,
          task_waiting: 0,
          task_tenant_id: null,
          task_organization_id: null,
          task_assigned_at: null,
        },
      ]);
      await both('UPDATE tasks SET status = 2 WHERE id = ?', [waiting]);
      await both('UPDATE tasks SET status = 1 WHERE id = ?', [done]);
      await turnsOf();
      await both('UPDATE tasks SET assigned_at = ?, organization_id = ? WHERE id = ?', [
        later,
        organizationIds[2],
        done,
      ]);
      await turnsOf();
      await both('UPDATE turns SET task_id = ? WHERE id = 3', [done]);
      await both('UPDATE turns SET task_id = NULL WHERE id = 1');
      await both('UPDATE tasks SET status = 3 WHERE id = ?', [waiting]);
      // A status change that keeps the task waiting (or not waiting) fires nothing.
      await both('UPDATE tasks SET status = 4 WHERE id = ?', [waiting]);
      expect(await turnsOf()).toEqual([
        {
          id: 1,
          task_id: null,
          task_waiting: 0,
          task_tenant_id: null,
          task_organization_id: null,
          task_assigned_at: null,
        },
        {
          id: 2,
          task_id: done,
          task_waiting: 1,
          task_tenant_id: t,
          task_organization_id: organizationIds[2],
          task_assigned_at: later,
        },
        {
          id: 3,
          task_id: done,
          task_waiting: 1,
          task_tenant_id: t,
          task_organization_id: organizationIds[2],
          task_assigned_at: later,
        },
      ]);

      // Append-only audit trails, and the JSON check of contracts.
      await both(
        `INSERT INTO dossier_audit_events (dossier_id, seq, action, at, actor_kind, actor_name, details, prev_hash, hash)
         VALUES (?, 1, 'created', ?, 'system', 'Hệ thống', '{}', 'p', 'h')`,
        [dossierIds[0], now],
      );
      await refusedOnBoth(
        "UPDATE dossier_audit_events SET hash = 'x'",
        [],
        /dossier audit events are append-only/,
      );
      await refusedOnBoth(
        'DELETE FROM dossier_audit_events',
        [],
        /dossier audit events are append-only/,
      );
      const [contract] = await both(
        `INSERT INTO contracts (uuid, tenant_id, contract_type_id, title, search_key, status, source_name,
           source_kind, created_by_user_id, expired_at, created_at, updated_at, audit_head)
         VALUES ('c-1', ?, 1, 'Hợp đồng', 'hop dong', 'draft', 'a.pdf', 'pdf', ?, ?, ?, ?, 'h') RETURNING id, existing_signatures`,
        [tenant!.id, user!.id, later, now, now],
      );
      expect(contract!.existing_signatures).toBe('[]');
      await both(
        `INSERT INTO contract_file_versions (contract_id, version, kind, sha256, size, mime_type, created_at)
         VALUES (?, 1, 'original', 'abc', 10, 'application/pdf', ?) RETURNING id`,
        [contract!.id, now],
      );
      await both(
        `INSERT INTO contract_audit_events (contract_id, seq, action, at, actor_kind, actor_name, details, prev_hash, hash)
         VALUES (?, 1, 'created', ?, 'system', 'Hệ thống', '{}', 'p', 'h')`,
        [contract!.id, now],
      );
      await refusedOnBoth(
        "UPDATE contract_audit_events SET action = 'sent'",
        [],
        /contract audit events are append-only/,
      );
      await refusedOnBoth(
        'DELETE FROM contract_audit_events WHERE id = 1',
        [],
        /contract audit events are append-only/,
      );
      await both(
        'SELECT id, seq, action, hash FROM contract_audit_events UNION ALL SELECT id, seq, action, hash FROM dossier_audit_events',
      );
      await refusedOnBoth(
        'UPDATE contracts SET existing_signatures = ?',
        ['[{"a":'],
        /CHECK constraint|check constraint/,
      );
      await both('UPDATE contracts SET existing_signatures = ?', [
        '[{"signer":"Nguyễn","ok":true}]',
      ]);
    }
  }, 60_000);

  it('are deterministic on PostgreSQL: two databases migrated apart dump the same schema', async () => {
    const dumps: string[] = [];
    for (const name of ['determinism_a', 'determinism_b']) {
      const url = createDatabase(cluster, name);
      const other = await connect(url);
      try {
        for (const migration of migrations) await applyPostgres(other, migration.postgres);
      } finally {
        await other.end();
      }
      const dump = execFileSync('pg_dump', ['--schema-only', '--no-owner', url], {
        encoding: 'utf8',
      });
      // pg_dump fences its output with a random key (`\restrict …`): not part of the schema.
      dumps.push(dump.replace(/^\\(un)?restrict .*$/gm, ''));
    }
    expect(dumps[0]).toContain('CREATE FUNCTION public.esign_fold_plain(text)');
    expect(dumps[1]).toBe(dumps[0]);
  }, 120_000);
});
