import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../db/database';
import type { SignaturePreparationsTable } from '../db/schema';

export type PreparationRow = Selectable<SignaturePreparationsTable>;

export function insertPreparation(
  db: Db,
  values: Insertable<SignaturePreparationsTable>,
): Promise<PreparationRow> {
  return db
    .insertInto('signature_preparations')
    .values(values)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The tenant's preparation with this id (another tenant's is not found). */
export function findPreparationRow(
  db: Db,
  id: number,
  tenantId: number,
): Promise<PreparationRow | undefined> {
  return db
    .selectFrom('signature_preparations')
    .selectAll()
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
}

/**
 * Document digests (hex) of the tenant's other preparations of the same source file, newest
 * first: what a client may have signed by mistake instead of the current one.
 */
export async function otherDocumentDigests(
  db: Db,
  row: Pick<PreparationRow, 'id' | 'tenant_id' | 'source_sha256'>,
  limit: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom('signature_preparations')
    .select('document_digest')
    .where('tenant_id', '=', row.tenant_id)
    .where('source_sha256', '=', row.source_sha256)
    .where('id', '!=', row.id)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => r.document_digest);
}

/** Marks an open preparation finalized; false when it was not open any more. */
export async function markPreparationFinalized(
  db: Db,
  id: number,
  values: {
    finalizedAt: string;
    signedSha256: string;
    summary: string;
    validationMaterial: string | null;
  },
): Promise<boolean> {
  const result = await db
    .updateTable('signature_preparations')
    .set({
      state: 'finalized',
      finalized_at: values.finalizedAt,
      signed_sha256: values.signedSha256,
      signature_summary: values.summary,
      validation_material: values.validationMaterial,
    })
    .where('id', '=', id)
    .where('state', '=', 'open')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The validation material (JSON) kept by the tenant's finalizes that produced this file. */
export async function validationMaterialOfSigned(
  db: Db,
  tenantId: number,
  signedSha256: string,
): Promise<string[]> {
  const rows = await db
    .selectFrom('signature_preparations')
    .select('validation_material')
    .where('tenant_id', '=', tenantId)
    .where('signed_sha256', '=', signedSha256)
    .where('state', '=', 'finalized')
    .execute();
  return rows.flatMap((row) => (row.validation_material === null ? [] : [row.validation_material]));
}

/** Marks an open preparation abandoned; false when it was not open. */
export async function markPreparationAbandoned(db: Db, id: number): Promise<boolean> {
  const result = await db
    .updateTable('signature_preparations')
    .set({ state: 'abandoned' })
    .where('id', '=', id)
    .where('state', '=', 'open')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The summaries (JSON) kept by the tenant's finalizes that produced these signed files. */
export async function summariesOfSigned(
  db: Db,
  tenantId: number,
  signedSha256s: string[],
): Promise<{ signed_sha256: string; signature_summary: string }[]> {
  if (signedSha256s.length === 0) return [];
  const rows = await db
    .selectFrom('signature_preparations')
    .select(['signed_sha256', 'signature_summary'])
    .where('tenant_id', '=', tenantId)
    .where('signed_sha256', 'in', signedSha256s)
    .where('state', '=', 'finalized')
    .execute();
  return rows.flatMap((row) =>
    row.signed_sha256 === null || row.signature_summary === null
      ? []
      : [{ signed_sha256: row.signed_sha256, signature_summary: row.signature_summary }],
  );
}
