import type { Db } from '../db/database';
import { dossierFiles, type NewestFile } from '../files/queries';
import { archiveStoredFile, type SignatureDeps, signedSummaries } from '../signatures';
import type { ArchiveSummary } from '../signing/finalize';
import type { StoredFile } from '../storage/fileStore';
import { insertFileVersion } from './queries/dossiers';

/**
 * The archive revision of a completed dossier (PAdES B-LTA): every MAIN file whose newest
 * version is a signature the service made gets one more version, the DSS for every signature
 * in it and a document timestamp (signing/finalize/archive.ts). The archives are made before the
 * completing transaction (a TSA failure refuses the completing action, nothing written) and
 * recorded inside it, before `document.completed` reads the dossier's files: a completed dossier
 * never changes afterwards and its webhook carries the archived files.
 */

/** What an archive needs: the signing engine's dependencies (the file store, the TSA, ...). */
export type ArchiveDeps = SignatureDeps;

/** The archive of one MAIN file, made from its newest version, not yet recorded. */
export interface FileArchive {
  fileId: number;
  /** The version it was made from: recorded only while that is still the newest. */
  sourceSha256: string;
  sha256: string;
  size: number;
  summary: ArchiveSummary;
}

/** Archives stored before a transaction: kept when it commits, removed when it fails. */
export interface PendingArchives {
  archives: FileArchive[];
  stored: StoredFile[];
}

export const noArchives: PendingArchives = { archives: [], stored: [] };

/** The MAIN files whose newest version is a signed revision the tenant's finalizes produced. */
async function signedMainFiles(db: Db, dossierId: number, tenantId: number): Promise<NewestFile[]> {
  const mains = (await dossierFiles(db, dossierId)).filter((file) => file.kind === 'MAIN');
  const signed = await signedSummaries(
    { db },
    tenantId,
    mains.map((file) => file.sha256),
  );
  return mains.filter((file) => signed.has(file.sha256));
}

/**
 * Makes and stores the archive of every signed MAIN file of the dossier as it stands, for a
 * transaction that is about to complete it. A failure removes what was stored and throws.
 */
export async function archiveSignedFiles(
  deps: ArchiveDeps,
  dossierId: number,
  tenantId: number,
): Promise<PendingArchives> {
  const pending: PendingArchives = { archives: [], stored: [] };
  try {
    for (const file of await signedMainFiles(deps.db, dossierId, tenantId)) {
      const archive = await archiveStoredFile(deps, file.sha256, tenantId);
      pending.stored.push(archive.file);
      pending.archives.push({
        fileId: file.id,
        sourceSha256: file.sha256,
        sha256: archive.file.sha256,
        size: archive.file.size,
        summary: archive.summary,
      });
    }
    return pending;
  } catch (error) {
    await settleArchives(deps, pending, false);
    throw error;
  }
}

/** Keeps the stored archives once their transaction committed, or removes them. */
export async function settleArchives(
  deps: Pick<ArchiveDeps, 'files'>,
  pending: PendingArchives,
  committed: boolean,
): Promise<void> {
  for (const file of pending.stored) {
    if (committed) deps.files.keep(file);
    else await deps.files.remove(file);
  }
}

/** What the `completed` audit event says of each archived file. */
export interface ArchivedVersion {
  fileUuid: string;
  fileVersion: number;
  documentHash: string;
  documentTimestamp: { fieldName: string; genTime: string; tsa: string };
  levels: ArchiveSummary['levels'];
}

/**
 * Inside the completing transaction: each signed MAIN file's archive becomes its next version.
 * A signed file without an archive of its newest version is a bug of the engine (the archives
 * are made for exactly the action that completes) and aborts the transaction.
 */
export async function recordArchives(
  trx: Db,
  dossierId: number,
  tenantId: number,
  archives: FileArchive[],
  at: string,
): Promise<ArchivedVersion[]> {
  const recorded: ArchivedVersion[] = [];
  for (const file of await signedMainFiles(trx, dossierId, tenantId)) {
    const archive = archives.find(
      (candidate) => candidate.fileId === file.id && candidate.sourceSha256 === file.sha256,
    );
    if (!archive) {
      throw new Error(`dossier ${dossierId} cannot complete: file ${file.id} has no archive`);
    }
    await insertFileVersion(trx, {
      file_id: file.id,
      version: file.version + 1,
      sha256: archive.sha256,
      size: archive.size,
      created_at: at,
    });
    const { fieldName, genTime, tsa, levels } = archive.summary;
    recorded.push({
      fileUuid: file.uuid,
      fileVersion: file.version + 1,
      documentHash: `sha256:${archive.sha256}`,
      documentTimestamp: { fieldName, genTime, tsa },
      levels,
    });
  }
  return recorded;
}
