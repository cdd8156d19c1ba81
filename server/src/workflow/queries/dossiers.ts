import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../../db/database';
import { JsonObject, parseJsonColumn } from '../../db/jsonColumn';
import type {
  DossierStatus,
  DossiersTable,
  FileVersionsTable,
  HistoryTable,
} from '../../db/schema';

export type DossierRow = Selectable<DossiersTable>;

/** `dossiers.metadata`: the JSON object the partner sent at creation (`{}` when none). */
export function dossierMetadataOf(dossier: Pick<DossierRow, 'metadata'>): Record<string, unknown> {
  return parseJsonColumn(JsonObject, 'dossiers.metadata', dossier.metadata);
}

export function dossierById(db: Db, dossierId: number): Promise<DossierRow> {
  return db
    .selectFrom('dossiers')
    .selectAll()
    .where('id', '=', dossierId)
    .executeTakeFirstOrThrow();
}

export function dossierStatus(
  db: Db,
  dossierId: number,
): Promise<{ id: number; status: DossierStatus }> {
  return db
    .selectFrom('dossiers')
    .select(['id', 'status'])
    .where('id', '=', dossierId)
    .executeTakeFirstOrThrow();
}

/** Status and signature counts of a dossier. */
export function dossierProgress(
  db: Db,
  dossierId: number,
): Promise<{ status: DossierStatus; signed_count: number; required_count: number }> {
  return db
    .selectFrom('dossiers')
    .select(['status', 'signed_count', 'required_count'])
    .where('id', '=', dossierId)
    .executeTakeFirstOrThrow();
}

export async function updateDossier(
  db: Db,
  dossierId: number,
  changes: Updateable<DossiersTable>,
): Promise<void> {
  await db.updateTable('dossiers').set(changes).where('id', '=', dossierId).execute();
}

/** One more signature: signedCount + 1, and PENDING_SIGN becomes IN_PROGRESS on the first. */
export async function countSignature(db: Db, dossierId: number, now: string): Promise<void> {
  await db
    .updateTable('dossiers')
    .set((eb) => ({
      signed_count: eb('signed_count', '+', 1),
      status: eb
        .case()
        .when('status', '=', 'PENDING_SIGN')
        .then('IN_PROGRESS' as DossierStatus)
        .else(eb.ref('status'))
        .end(),
      updated_at: now,
    }))
    .where('id', '=', dossierId)
    .execute();
}

export async function insertHistory(db: Db, row: Insertable<HistoryTable>): Promise<void> {
  await db.insertInto('history').values(row).execute();
}

/** `actor_name` of the newest history row: who handled the dossier last. */
export async function lastActorName(db: Db, dossierId: number): Promise<string | null> {
  const row = await db
    .selectFrom('history')
    .select('actor_name')
    .where('dossier_id', '=', dossierId)
    .orderBy('action_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.actor_name ?? null;
}

/** The file if it is a main (signed) file of the dossier. */
export function mainFileOfDossier(
  db: Db,
  fileId: number,
  dossierId: number,
): Promise<{ id: number } | undefined> {
  return db
    .selectFrom('dossier_files')
    .select('id')
    .where('id', '=', fileId)
    .where('dossier_id', '=', dossierId)
    .where('kind', '=', 'MAIN')
    .executeTakeFirst();
}

/** The highest version number of a file (0 when it has none). */
export async function newestVersionNumber(db: Db, fileId: number): Promise<number> {
  const newest = await db
    .selectFrom('file_versions')
    .select((eb) => eb.fn.max('version').as('version'))
    .where('file_id', '=', fileId)
    .executeTakeFirst();
  return Number(newest?.version ?? 0);
}

export async function insertFileVersion(db: Db, row: Insertable<FileVersionsTable>): Promise<void> {
  await db.insertInto('file_versions').values(row).execute();
}
