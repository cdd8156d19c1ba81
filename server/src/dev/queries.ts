import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../db/database';
import type { DevelopmentCaIssuedTable, DevelopmentCaTable } from '../db/schema';

export type DevelopmentCaRow = Selectable<DevelopmentCaTable>;

/** The development CA's one row (id 1), if made. */
export function findDevelopmentCa(db: Db): Promise<DevelopmentCaRow | undefined> {
  return db.selectFrom('development_ca').selectAll().where('id', '=', 1).executeTakeFirst();
}

/** Whether the development CA exists (start-up's light check). */
export async function developmentCaRecorded(db: Db): Promise<boolean> {
  const row = await db.selectFrom('development_ca').select('id').executeTakeFirst();
  return row !== undefined;
}

/**
 * Inserts the CA unless one exists (another instance or process made it first: kept as is);
 * true when this one was recorded.
 */
export async function insertDevelopmentCa(
  db: Db,
  values: Omit<Insertable<DevelopmentCaTable>, 'id'>,
): Promise<boolean> {
  const inserted = await db
    .insertInto('development_ca')
    .values({ id: 1, ...values })
    .onConflict((conflict) => conflict.doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Records issued certificates; a serial already recorded keeps its row. */
export async function insertIssuedCertificates(
  db: Db,
  rows: Insertable<DevelopmentCaIssuedTable>[],
): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('development_ca_issued')
    .values(rows)
    .onConflict((conflict) => conflict.doNothing())
    .execute();
}

export async function issuedCertificateExists(db: Db, serialHex: string): Promise<boolean> {
  const row = await db
    .selectFrom('development_ca_issued')
    .select('serial_hex')
    .where('serial_hex', '=', serialHex)
    .executeTakeFirst();
  return row !== undefined;
}
