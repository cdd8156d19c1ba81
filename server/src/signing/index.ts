/**
 * The signing engine as a library (with server/src/pdf): sign a PDF (PAdES B-T, B-LT when the
 * revocation answers come) and verify the signatures of any PDF, given explicit inputs and
 * nothing else: a signer (certificate chain + a sign function), a timestamp authority, a trust
 * policy, a fetcher for OCSP/CRL, a clock and a temp directory. It reads no configuration, no
 * database and opens no socket; it throws EngineError (a code, never an HTTP status).
 * docs/engine.md shows a whole script.
 */
export { CodedError } from '@esign/shared';
export { EngineError } from '../pdf/engineError';
export type { Clock, Fetcher, FetchRequest, FetchResult } from './fetcher';
export type { PdfSigner, SealOptions as SignPdfOptions, SignPdfDeps } from './finalize';
export { signPdf } from './finalize';
export { httpTimestampAuthority } from './timestamps/client';
export type { TimestampAuthority, TrustPolicies, TrustPolicy } from './trustPolicy';
export type {
  PdfVerification,
  SignatureVerification,
  VerificationDeps,
  VerifyPdfOptions,
} from './verification';
export { verifyPdfSignatures } from './verification';
