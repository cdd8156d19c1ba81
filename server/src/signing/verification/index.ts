/** Verification of the PAdES signatures of a PDF (ours and other tools'). */
export type {
  CertificateStatus,
  PdfVerification,
  SignatureVerification,
  VerificationDeps,
  VerifyPdfOptions,
} from './verifyPdf';
export { verifyPdfSignatures } from './verifyPdf';
