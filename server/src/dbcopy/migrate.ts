import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { verifyAuditChain } from '../audit/chain';
import type { AuditSubject } from '../audit/subject';
import {
  type CopyRow,
  type CopySource,
  type CopyTable,
  type CopyValue,
  inCopyTransaction,
  insertCopiedRows,
  openCopySource,
  restartIdentities,
  setTrigger,
  targetCount,
  targetHasRows,
  targetPage,
  targetTables,
  targetVersions,
} from '../db/copy';
import { type Db, openPostgresDatabase } from '../db/database';
import { DomainError } from '../errors/domainError';
import type { Config } from '../platform/config';
import { createLogger } from '../platform/logger';
import { openRuntime } from '../runtime';
import { verifyPdfSignatures } from '../signing/verification';
import { auditTrails, type SignedFile, signedFiles } from './queries';

/**
 * `admin db migrate-to-postgres --to URL`: moves a single-host deployment's SQLite database
 * (DATA_DIR/esign.sqlite) into an empty PostgreSQL database, with the server stopped.
 *
 * 1. The target is migrated (the server's own migrations) and must hold no row in any table;
 *    both schemas must be at the same migration.
 * 2. Every table is copied in foreign-key order (read from SQLite's schema), a page of rows per
 *    INSERT, ids included, all in ONE PostgreSQL transaction; identity sequences are then set
 *    past the copied ids.
 * 3. Still in that transaction: per table the row count and a digest of every row in key order
 *    (a canonical encoding of each value) are equal on both sides, every audit trail's hash
 *    chain holds, and no one wrote to the SQLite file meanwhile. Anything else rolls it back:
 *    the target stays empty.
 * 4. After the commit, every signed PDF is verified again by the service's own verifier on a
 *    runtime opened on PostgreSQL (trust anchors, development CA and keys as copied).
 */

/** Tables whose rows mean nothing on another database: not copied. */
export const skippedTables: Record<string, string> = {
  rate_windows:
    'rate-limit counters of windows a few minutes long; they start again at zero on the new database',
};

/**
 * Triggers that must not fire on copied rows, and why. The other triggers stay on: the
 * search-key and waiting-turn triggers recompute, on each copied row, columns SQLite's triggers
 * computed (the digests prove they agree); the append-only ones refuse UPDATE and DELETE only;
 * the write notifications are once per statement and harmless.
 */
const triggersOff = [
  {
    table: 'tenants',
    trigger: 'tenants_default_contract_type',
    why: "adds a tenant's default contract type, which is copied with the contract types",
  },
];

/** Rows per INSERT, fewer for wide tables (PostgreSQL binds at most 65,535 parameters). */
const rowsPerBatch = (columns: number) => Math.min(1000, Math.floor(30_000 / columns));

export interface TableReport {
  name: string;
  rows: number;
  /** SHA-256 of the canonical encoding of every row, in primary-key order (equal on both sides). */
  digest: string;
}

export interface MigrationReport {
  /** The target, without its password. */
  target: string;
  schemaVersion: number;
  tables: TableReport[];
  skipped: { name: string; rows: number; reason: string }[];
  rows: number;
  sequences: number;
  auditTrails: { checked: number; events: number; brokenInSource: string[] };
  signedPdfs: { checked: number; valid: number; invalidInSource: string[] };
  /** Where the master secret comes from now; the target deployment needs the same one. */
  masterSecret: { from: 'SECRET_KEY' } | { from: 'master.key'; file: string };
}

const refused = (code: string, message: string) => new DomainError(code, message);

/** `postgres://user@host:port/db`: what may be printed of a URL. */
export function displayedUrl(url: string): string {
  const parsed = new URL(url);
  parsed.password = '';
  return parsed.toString();
}

export async function migrateToPostgres(config: Config, url: string): Promise<MigrationReport> {
  if (config.databaseUrl !== undefined) {
    throw refused(
      'MIGRATE_SOURCE_NOT_SQLITE',
      'DATABASE_URL is set: this deployment already uses PostgreSQL. Run the command with the settings of the SQLite deployment (DATA_DIR, no DATABASE_URL).',
    );
  }
  if (!fs.existsSync(config.databaseFile)) {
    throw refused('MIGRATE_SOURCE_MISSING', `No database at ${config.databaseFile}`);
  }
  const masterKeyFile = path.join(path.resolve(config.dataDir), 'master.key');
  const masterSecret: MigrationReport['masterSecret'] =
    config.secretKey !== undefined
      ? { from: 'SECRET_KEY' }
      : { from: 'master.key', file: masterKeyFile };
  if (config.secretKey === undefined && !fs.existsSync(masterKeyFile)) {
    throw refused(
      'MIGRATE_SOURCE_MISSING',
      `Neither SECRET_KEY nor ${masterKeyFile} is set: run the command with the master secret of the deployment being moved`,
    );
  }

  const source = openCopySource(config.databaseFile);
  const target = openPostgresDatabase(url);
  try {
    await target.ready();
    const copied = await inCopyTransaction(target.db, (trx) => copyAndCheck(source, trx));
    const signedPdfs = await verifySignedPdfs(config, url);
    return { target: displayedUrl(url), ...copied, signedPdfs, masterSecret };
  } finally {
    await target.close();
    await source.close();
  }
}

async function copyAndCheck(source: CopySource, trx: Db) {
  // 1. An empty target at the source's schema.
  const onTarget = await targetTables(trx);
  const filled: string[] = [];
  for (const table of onTarget.keys()) {
    if (table !== 'schema_migrations' && (await targetHasRows(trx, table))) filled.push(table);
  }
  if (filled.length > 0) {
    throw refused(
      'MIGRATE_TARGET_NOT_EMPTY',
      `The target database already holds data (in ${filled.slice(0, 5).join(', ')}${filled.length > 5 ? ', …' : ''}): migrate into a new, empty database only`,
    );
  }
  const sourceVersions = source.versions();
  const targetVersionList = await targetVersions(trx);
  const schemaVersion = sourceVersions.at(-1) ?? 0;
  if (sourceVersions.join(',') !== targetVersionList.join(',')) {
    const targetVersion = targetVersionList.at(-1) ?? 0;
    throw refused(
      'MIGRATE_SCHEMA_MISMATCH',
      schemaVersion < targetVersion
        ? `The SQLite database is at schema ${schemaVersion}, this build at ${targetVersion}: start the server once on SQLite with this build (it applies the migrations), stop it, and run the command again`
        : `The SQLite database is at schema ${schemaVersion}, the target at ${targetVersion}: run the command with the build that runs the server`,
    );
  }
  const all = source.tables().filter((table) => table.name !== 'schema_migrations');
  const tables = all.filter((table) => skippedTables[table.name] === undefined);
  checkSameTables(tables, onTarget);

  // 2. The copy.
  for (const { table, trigger } of triggersOff) await setTrigger(trx, table, trigger, false);
  const ordered = foreignKeyOrder(tables);
  let rows = 0;
  for (const table of ordered) {
    const batch = rowsPerBatch(table.columns.length);
    for (const page of pages((after) => source.page(table, after, batch), table)) {
      await insertCopiedRows(trx, table.name, table.columns, page);
      rows += page.length;
    }
  }
  for (const { table, trigger } of triggersOff) await setTrigger(trx, table, trigger, true);
  const sequences = await restartIdentities(trx);

  // 3. The checks.
  const reports: TableReport[] = [];
  const mismatches: string[] = [];
  for (const table of ordered) {
    const [sourceRows, targetRows] = [source.count(table), await targetCount(trx, table.name)];
    const sourceDigest = await digestOf(table, async (after, limit) =>
      source.page(table, after, limit),
    );
    const targetDigest = await digestOf(table, (after, limit) =>
      targetPage(trx, table, after, limit),
    );
    if (sourceRows !== targetRows) {
      mismatches.push(`${table.name}: ${sourceRows} rows in SQLite, ${targetRows} in PostgreSQL`);
    } else if (sourceDigest !== targetDigest) {
      mismatches.push(`${table.name}: the rows differ (digest ${sourceDigest} ≠ ${targetDigest})`);
    }
    reports.push({ name: table.name, rows: targetRows, digest: targetDigest });
  }
  if (mismatches.length > 0) {
    throw refused(
      'MIGRATE_VERIFY_FAILED',
      `The copy does not match the SQLite database (nothing was committed): ${mismatches.join('; ')}`,
    );
  }
  const trails = await checkAuditTrails(source.db, trx);
  if (source.finish()) {
    throw refused(
      'MIGRATE_SOURCE_CHANGED',
      'The SQLite database was written during the copy (is the server still running?): nothing was committed. Stop the server and run the command again.',
    );
  }
  return {
    schemaVersion,
    tables: reports,
    skipped: all
      .filter((table) => skippedTables[table.name] !== undefined)
      .map((table) => ({
        name: table.name,
        rows: source.count(table),
        reason: skippedTables[table.name]!,
      })),
    rows,
    sequences,
    auditTrails: trails,
  };
}

/** Both databases have the same tables with the same columns (the migrations made both). */
function checkSameTables(tables: CopyTable[], onTarget: Map<string, string[]>): void {
  const problems: string[] = [];
  const names = new Set(tables.map((table) => table.name));
  for (const table of tables) {
    const columns = onTarget.get(table.name);
    if (columns === undefined) {
      problems.push(`${table.name} is missing`);
      continue;
    }
    const sorted = (list: string[]) => [...list].sort().join(', ');
    if (sorted(columns) !== sorted(table.columns)) {
      problems.push(`${table.name} has (${sorted(columns)}), SQLite (${sorted(table.columns)})`);
    }
    if (table.primaryKey.length === 0) problems.push(`${table.name} has no primary key`);
  }
  for (const name of onTarget.keys()) {
    if (!names.has(name) && name !== 'schema_migrations' && skippedTables[name] === undefined) {
      problems.push(`${name} is not in the SQLite database`);
    }
  }
  if (problems.length > 0) {
    throw refused(
      'MIGRATE_SCHEMA_MISMATCH',
      `The two schemas differ although their migrations are the same: ${problems.join('; ')}`,
    );
  }
}

/**
 * The tables in an order where every table comes after the tables its foreign keys name
 * (alphabetical among those free at each step, so that the order is stable). A table that
 * names itself (an organization's parent) is copied in key order: a parent is older than its
 * children, so it has the smaller id.
 */
export function foreignKeyOrder(tables: CopyTable[]): CopyTable[] {
  const names = new Set(tables.map((table) => table.name));
  const pending = new Map(tables.map((table) => [table.name, table]));
  const done = new Set<string>();
  const ordered: CopyTable[] = [];
  while (pending.size > 0) {
    const free = [...pending.values()]
      .filter((table) => table.references.every((other) => done.has(other) || !names.has(other)))
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    if (free.length === 0) {
      throw new Error(
        `The foreign keys of ${[...pending.keys()].join(', ')} form a cycle: no order copies them`,
      );
    }
    for (const table of free) {
      ordered.push(table);
      done.add(table.name);
      pending.delete(table.name);
    }
  }
  return ordered;
}

/** The key of a row: its primary-key values. */
function keyOf(table: CopyTable, row: CopyRow): CopyValue[] {
  return table.primaryKey.map((column) => row[table.columns.indexOf(column)] ?? null);
}

/** A table's rows page by page from a synchronous reader (SQLite). */
function* pages(
  read: (after: CopyValue[] | undefined) => CopyRow[],
  table: CopyTable,
): Generator<CopyRow[]> {
  let after: CopyValue[] | undefined;
  for (;;) {
    const page = read(after);
    if (page.length === 0) return;
    yield page;
    after = keyOf(table, page.at(-1)!);
  }
}

/**
 * SHA-256 over the canonical encoding of every row in primary-key order: per row its column
 * count, then per value a tag and the value (`n` null; `d` a number as JS prints it; `s` text
 * and `b` bytes with their byte length first), so that no two different tables of values
 * encode alike. Integers compare as numbers, text as its UTF-8 bytes, BLOB and BYTEA as bytes.
 */
async function digestOf(
  table: CopyTable,
  read: (after: CopyValue[] | undefined, limit: number) => Promise<CopyRow[]>,
): Promise<string> {
  const hash = crypto.createHash('sha256');
  const limit = rowsPerBatch(table.columns.length);
  let after: CopyValue[] | undefined;
  for (;;) {
    const page = await read(after, limit);
    for (const row of page) {
      hash.update(`r${row.length}:`);
      for (const [index, value] of row.entries()) encodeValue(hash, table, index, value);
    }
    if (page.length < limit) return hash.digest('hex');
    after = keyOf(table, page.at(-1)!);
  }
}

function encodeValue(hash: crypto.Hash, table: CopyTable, index: number, value: unknown): void {
  if (value === null) hash.update('n;');
  else if (typeof value === 'number') hash.update(`d${String(value)};`);
  else if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    hash.update(`s${bytes.length}:`);
    hash.update(bytes);
  } else if (Buffer.isBuffer(value)) {
    hash.update(`b${value.length}:`);
    hash.update(value);
  } else {
    throw refused(
      'MIGRATE_VERIFY_FAILED',
      `${table.name}.${table.columns[index]} holds a ${typeof value} value the copy does not know`,
    );
  }
}

const trailName = (trail: AuditSubject) => `${trail.kind} ${trail.id}`;

/**
 * Every audit trail's hash chain holds on PostgreSQL. A trail that is broken there must be
 * broken alike in SQLite (the digests already showed the rows equal): it is reported, and the
 * copy goes on; one that holds in SQLite only fails the migration.
 */
async function checkAuditTrails(sourceDb: Db, trx: Db) {
  const trails = await auditTrails(trx);
  const brokenInSource: string[] = [];
  let events = 0;
  for (const trail of trails) {
    const result = await verifyAuditChain(trx, trail);
    events += result.events;
    if (result.valid) continue;
    if ((await verifyAuditChain(sourceDb, trail)).valid) {
      throw refused(
        'MIGRATE_VERIFY_FAILED',
        `The audit trail of ${trailName(trail)} holds in SQLite but not in PostgreSQL (broken at event ${result.brokenAt}: ${result.reason}); nothing was committed`,
      );
    }
    brokenInSource.push(trailName(trail));
  }
  return { checked: trails.length, events, brokenInSource };
}

/**
 * Every signed PDF verified by the service's verifier on a runtime opened on the committed
 * PostgreSQL database (its trust anchors, development CA and keys as copied, the same files).
 * A PDF found invalid there is verified on SQLite too: invalid there as well, it is reported;
 * valid there, the migration failed.
 */
async function verifySignedPdfs(config: Config, url: string) {
  const quiet = createLogger('warn', process.stderr);
  const runtime = openRuntime({ ...config, databaseUrl: url }, { logger: quiet });
  let checked = 0;
  let valid = 0;
  const invalid: SignedFile[] = [];
  try {
    await runtime.database.ready();
    const { deps } = runtime;
    for (const file of await signedFiles(deps.db)) {
      checked += 1;
      const verification = await deps.files.withLocalFile(file.sha256, (pdf) =>
        verifyPdfSignatures(deps, pdf, { tenantId: file.tenantId }),
      );
      if (verification.isValid) valid += 1;
      else invalid.push(file);
    }
  } finally {
    await runtime.database.close();
  }
  if (invalid.length === 0) return { checked, valid, invalidInSource: [] };
  const before = openRuntime(config, { logger: quiet });
  try {
    const { deps } = before;
    for (const file of invalid) {
      const verification = await deps.files.withLocalFile(file.sha256, (pdf) =>
        verifyPdfSignatures(deps, pdf, { tenantId: file.tenantId }),
      );
      if (verification.isValid) {
        throw refused(
          'MIGRATE_VERIFY_FAILED',
          `The signed PDF ${file.sha256} verifies on SQLite but not on PostgreSQL. The copy is committed: drop and recreate the target database before running the command again.`,
        );
      }
    }
  } finally {
    await before.database.close();
  }
  return { checked, valid, invalidInSource: invalid.map((file) => file.sha256) };
}
