import type { Db } from '../db/database';
import { queryShape } from '../db/queryShape';
import type { FileKind } from '../db/schema';

/** A dossier file with its newest version (version 1 is the original; every signature adds one). */
export interface NewestFile {
  id: number;
  uuid: string;
  dossierId: number;
  kind: FileKind;
  title: string;
  ecmClassCode: string | null;
  mimeType: string;
  version: number;
  sha256: string;
  size: number;
}

/** dossier_files joined with their newest file_versions row (SEARCH by the (file_id, version) key). */
export function filesWithNewestVersion(db: Db) {
  return db
    .selectFrom('dossier_files as f')
    .innerJoin('file_versions as v', 'v.file_id', 'f.id')
    .where(({ eb, selectFrom }) =>
      eb(
        'v.version',
        '=',
        selectFrom('file_versions as nv')
          .select(({ fn }) => fn.max('nv.version').as('newest'))
          .whereRef('nv.file_id', '=', 'f.id'),
      ),
    )
    .select([
      'f.id as id',
      'f.uuid as uuid',
      'f.dossier_id as dossierId',
      'f.kind as kind',
      'f.title as title',
      'f.ecm_class_code as ecmClassCode',
      'f.mime_type as mimeType',
      'v.version as version',
      'v.sha256 as sha256',
      'v.size as size',
    ]);
}

/** Every file of a dossier, MAIN files first, each kind in its position order. */
const filesOfDossier = queryShape((db: Db, values: { dossierId: number }) =>
  filesWithNewestVersion(db)
    .where('f.dossier_id', '=', values.dossierId)
    .orderBy('f.kind', 'desc')
    .orderBy('f.position'),
);

export function dossierFiles(db: Db, dossierId: number): Promise<NewestFile[]> {
  return filesOfDossier.all(db, { dossierId });
}

/** The file with this uuid, whoever owns it (the presigned route: the signature is the credential). */
export function fileByUuid(db: Db, fileUuid: string): Promise<NewestFile | undefined> {
  return filesWithNewestVersion(db).where('f.uuid', '=', fileUuid).executeTakeFirst();
}
