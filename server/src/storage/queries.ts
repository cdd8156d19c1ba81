import type { Db } from '../db/database';

/**
 * The sweep's SQL: which stored files rows still name, and the preparations it ends. Every
 * column that names a FileStore file is listed here; a new one must be added, or the sweep
 * deletes its files.
 */

/**
 * SHA-256 of every stored file a row names: templates, dossier file versions, contract file
 * versions, the source and signed file of every preparation, and the prepared file of a
 * preparation that is open and expired no earlier than `openExpiredAfter`.
 */
export async function referencedFiles(db: Db, openExpiredAfter: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom('templates')
    .select('sha256')
    .union(db.selectFrom('file_versions').select('sha256'))
    .union(db.selectFrom('contract_file_versions').select('sha256'))
    .union(db.selectFrom('signature_preparations').select('source_sha256 as sha256'))
    .union(
      db
        .selectFrom('signature_preparations')
        .select('signed_sha256 as sha256')
        .where('signed_sha256', 'is not', null)
        .$narrowType<{ sha256: string }>(),
    )
    .union(
      db
        .selectFrom('signature_preparations')
        .select('prepared_sha256 as sha256')
        .where('state', '=', 'open')
        .where('expires_at', '>', openExpiredAfter),
    )
    .execute();
  return new Set(rows.map((row) => row.sha256));
}

/** Open preparations that expired at or before `expiredBy` (none can be finalized any more). */
export async function countExpiredOpenPreparations(db: Db, expiredBy: string): Promise<number> {
  const row = await db
    .selectFrom('signature_preparations')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('state', '=', 'open')
    .where('expires_at', '<=', expiredBy)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Marks those preparations abandoned; returns how many. */
export async function abandonExpiredPreparations(db: Db, expiredBy: string): Promise<number> {
  const result = await db
    .updateTable('signature_preparations')
    .set({ state: 'abandoned' })
    .where('state', '=', 'open')
    .where('expires_at', '<=', expiredBy)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
