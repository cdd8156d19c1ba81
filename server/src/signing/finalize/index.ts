/**
 * The finalize pipeline of the PAdES engine: persistent preparations of a stored PDF, and one
 * pipeline that checks a signature (from a token client or a service key), embeds it with its
 * timestamp and revocation data and stores the signed file in the caller's transaction.
 */
export type { ArchiveSummary, StoredArchive } from './archive';
export { archiveStoredFile } from './archive';
export type { FinalizeDeps, SignatureEvidence } from './checkSignature';
export { finalizeErrors } from './errors';
export type { FinalizeOptions, FinalizeResult, SignedRevision } from './finalize';
export { finalizeWithToken, signWithServerKey } from './finalize';
export type { Preparation, PrepareRevisionInput } from './preparation';
export {
  abandonPreparation,
  findPreparation,
  openPreparation,
  prepareRevision,
  signedSummaries,
} from './preparation';
export type { SealOptions } from './seal';
export { sealPdf } from './seal';
export type { CertificateSummary, SignatureSummary } from './summary';
export type { TokenSignatureInput } from './tokenInput';
export { decodeCertificate } from './tokenInput';
