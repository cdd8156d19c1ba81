import { type ArchiveSummary, archivePdf } from '../signing/finalize/archive';
import type { StoredFile } from '../storage/fileStore';
import type { SignatureDeps } from './preparations';
import { validationMaterialOfSigned } from './queries';
import { materialOf } from './storedColumns';

/** An archive revision in the FileStore, unnamed until the caller keeps it (or removes it). */
export interface StoredArchive {
  /** The stored file it was made from. */
  sourceSha256: string;
  file: StoredFile;
  summary: ArchiveSummary;
}

/**
 * The archive revision (archivePdf) of a stored file the tenant's finalizes produced, with the
 * validation material they kept, put into the FileStore. The caller keeps it once its
 * transaction committed, or removes it. A TSA that fails is 502 TIMESTAMP_FAILED, nothing stored.
 */
export async function archiveStoredFile(
  deps: SignatureDeps,
  sourceSha256: string,
  tenantId: number,
): Promise<StoredArchive> {
  const kept = await validationMaterialOfSigned(deps.db, tenantId, sourceSha256);
  const archived = await deps.files.withLocalFile(sourceSha256, (file) =>
    archivePdf(deps, file, { tenantId, stored: kept.map(materialOf) }),
  );
  const file = await deps.files.putHashed(archived.path, archived);
  return { sourceSha256, file, summary: archived.summary };
}
