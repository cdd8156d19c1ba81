import { appendAuditEvent } from '../audit/chain';
import type { AuditActor, AuditOrigin } from '../audit/subject';
import { dossierTrail } from '../audit/subject';
import type { AppDeps } from '../context';
import { inTransaction } from '../db/database';
import type { NewestFile } from '../files/queries';

/** Who fetched a presigned URL: its signature is the credential, no account is known. */
export const presignedUrlActor: AuditActor = { kind: 'system', name: 'presigned URL' };

/**
 * Records a file download in its dossier's audit trail, before the bytes are streamed: the
 * file, the version and its hash, and the way in (`api` with a credential, `presigned_url`,
 * `signing_page` by the signer of the web app's signing page).
 */
export async function recordFileDownload(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  file: NewestFile,
  by: { actor: AuditActor; origin: AuditOrigin; via: 'api' | 'presigned_url' | 'signing_page' },
): Promise<void> {
  await inTransaction(deps.db, (trx) =>
    appendAuditEvent(trx, deps.clock, dossierTrail(file.dossierId), {
      action: 'downloaded',
      actor: by.actor,
      origin: by.origin,
      details: {
        via: by.via,
        fileUuid: file.uuid,
        kind: file.kind,
        title: file.title,
        version: file.version,
        sha256: file.sha256,
      },
    }),
  );
}
