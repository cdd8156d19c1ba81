import type { Db } from '../db/database';

/** The rows a backup's manifest counts, so that an operator sees at a glance what it holds. */
const countedTables = [
  'tenants',
  'users',
  'contracts',
  'contract_file_versions',
  'contract_audit_events',
  'dossiers',
  'file_versions',
  'dossier_audit_events',
  'signing_keys',
] as const;

export type BackupCounts = Record<(typeof countedTables)[number], number>;

/** How many rows each counted table of the copy holds. */
export async function countRows(db: Db): Promise<BackupCounts> {
  const counts = {} as BackupCounts;
  for (const table of countedTables) {
    const row = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    counts[table] = Number(row.count);
  }
  return counts;
}
