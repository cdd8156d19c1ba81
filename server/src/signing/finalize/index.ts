/**
 * The finalize pipeline of the PAdES engine: one check of a signature (from a token client or
 * a service key) against the revision it signs, the signed file with its timestamp and
 * revocation data embedded, a seal, and the archive revision (B-LTA). Storing preparations and
 * signed files is the app's (server/src/signatures).
 */
export type { ArchiveSummary } from './archive';
export type { CheckDeps, FinalizeDeps, SignatureEvidence } from './checkSignature';
export { finalizeErrors } from './errors';
export type { Preparation } from './preparedRevision';
export type { SealOptions, SignPdfDeps } from './seal';
export { sealPdf, signPdf } from './seal';
export type { PdfSigner } from './serverKey';
export { keySigner } from './serverKey';
export type { CertificateSummary, SignatureSummary } from './summary';
export type { TokenSignatureInput } from './tokenInput';
export { decodeCertificate } from './tokenInput';
