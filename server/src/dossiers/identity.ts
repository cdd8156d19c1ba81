import type { Selectable } from 'kysely';
import type { DossiersTable } from '../db/schema';

type DossierNames = Pick<
  Selectable<DossiersTable>,
  'id' | 'document_id' | 'uuid' | 'title' | 'transaction_id'
>;

/**
 * How every answer names a dossier: its numeric id (`folderId`), the partner's `documentId`
 * (empty for one created in the web application), its uuid, title and transaction id.
 */
export function dossierIdentity(dossier: DossierNames) {
  return {
    folderId: dossier.id,
    documentId: dossier.document_id ?? '',
    documentUuid: dossier.uuid,
    documentTitle: dossier.title,
    transactionId: dossier.transaction_id,
  };
}
