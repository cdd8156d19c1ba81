/**
 * Signatures of stored files: preparations kept in the database, finalizing one (a token's
 * signature or a service key's) into a new stored file in the caller's transaction, and the
 * archive revision of a stored file. The checks and the PDF work are the engine's
 * (signing/finalize, pdf/).
 */
export type { StoredArchive } from './archive';
export { archiveStoredFile } from './archive';
export type { FinalizeOptions, FinalizeResult, SignedRevision } from './finalize';
export { finalizeWithToken, signWithServerKey } from './finalize';
export type { PrepareRevisionInput, SignatureDeps } from './preparations';
export {
  abandonPreparation,
  findPreparation,
  openPreparation,
  prepareRevision,
  signedSummaries,
} from './preparations';
