import fs from 'node:fs/promises';
import { messagesOf } from '@esign/shared/messages';
import { appendAuditEvent } from '../audit/chain';
import { userActor } from '../audit/origin';
import type { AuditActor, AuditOrigin } from '../audit/subject';
import { dossierTrail } from '../audit/subject';
import { requireActor } from '../auth/authenticate';
import type { AppDeps, Principal } from '../context';
import { inTransaction } from '../db/database';
import { fileNotFound, fileResponse, temporaryFileResponse } from '../files/download';
import type { NewestFile } from '../files/queries';
import { dossierAuditPdf } from './auditPdf';
import { fileInScope } from './queries';
import { dossierInScopeById, scopeOf } from './scope';

/** Who fetched a presigned URL: its signature is the credential, no account is known. */
export const presignedUrlActor: AuditActor = { kind: 'system', name: 'presigned URL' };

/** The way a file left the service: the API, a presigned URL, or a page of the web app. */
export type DownloadVia = 'api' | 'presigned_url' | 'web' | 'signing_page';

/**
 * Records a file download in its dossier's audit trail, before the bytes are streamed: the
 * file, the version and its hash, and the way in (`api` with a credential, `presigned_url`,
 * `web` from the web app's pages, `signing_page` by the signer of the signing page). A page
 * showing the file inline records it as `viewed`.
 */
export async function recordFileDownload(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  file: NewestFile,
  by: { actor: AuditActor; origin: AuditOrigin; via: DownloadVia; viewed?: boolean },
): Promise<void> {
  await inTransaction(deps.db, (trx) =>
    appendAuditEvent(trx, deps.clock, dossierTrail(file.dossierId), {
      action: by.viewed ? 'viewed' : 'downloaded',
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

/**
 * The newest version of a file whose dossier is in the caller's scope (and, from a dossier's
 * page, of that dossier), streamed after the download is recorded; anything else is 404
 * FILE_NOT_FOUND, existence not revealed.
 */
export async function downloadFileInScope(
  deps: AppDeps,
  principal: Principal,
  request: { fileUuid: string; dossierId?: number; viewed?: boolean },
  by: { origin: AuditOrigin; via: 'api' | 'web' },
): Promise<Response> {
  const scope = await scopeOf(deps.db, principal);
  const file = await fileInScope(deps.db, scope, request.fileUuid);
  if (!file || (request.dossierId !== undefined && file.dossierId !== request.dossierId)) {
    throw fileNotFound(request.fileUuid);
  }
  const caller = requireActor(principal);
  await recordFileDownload(deps, file, {
    actor: await userActor(deps.db, caller.id, caller.username),
    origin: by.origin,
    via: by.via,
    viewed: request.viewed ?? false,
  });
  return fileResponse(deps, file, { redirect: !request.viewed });
}

/**
 * The dossier's audit trail as a sealed PDF (dossiers/auditPdf.ts), for a caller who may see
 * the dossier (else 404); the download is itself recorded in the trail, after the PDF.
 */
export async function downloadDossierAudit(
  deps: AppDeps,
  principal: Principal,
  dossierId: number,
  origin: AuditOrigin,
): Promise<Response> {
  const scope = await scopeOf(deps.db, principal);
  const dossier = await dossierInScopeById(deps.db, scope, dossierId);
  const caller = requireActor(principal);
  const sealed = await dossierAuditPdf(deps, dossier);
  try {
    const actor = await userActor(deps.db, caller.id, caller.username);
    await inTransaction(deps.db, (trx) =>
      appendAuditEvent(trx, deps.clock, dossierTrail(dossier.id), {
        action: 'downloaded',
        actor,
        origin,
        details: { type: 'audit' },
      }),
    );
    return await temporaryFileResponse(sealed, {
      mimeType: 'application/pdf',
      title: messagesOf(deps.config.notify.locale).server.downloadName.dossierAuditTrail(
        dossier.title,
      ),
    });
  } catch (error) {
    await fs.rm(sealed, { force: true });
    throw error;
  }
}
