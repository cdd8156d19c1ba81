/**
 * The PDF side of signing: prepare an incremental update with a signature placeholder, embed
 * the CMS, add a DSS (B-LT), and read the signatures and revisions back for verification.
 *
 * Everything here is synchronous reading and writing (plus the file copies of `embed.ts`); the
 * reads are what the PDF worker threads run: callers go through `runPdfTask` with the tasks of
 * `../worker/tasks.ts`, or through `../signatureUpdates.ts` (`preparePdfSignature`,
 * `appendDss`), never on the event loop.
 */
export type { SignatureImage, SignatureRect } from './appearance';
export type {
  ChangeKind,
  DssItem,
  DssItemType,
  RevisionChange,
  SignedRevisionFinding,
} from './diff';
export type { DssMaterial } from './dss';
export { readDss } from './dss';
export type { SignedCopy } from './embed';
export { digestByteRange, embedSignature, writeSignedCopy } from './embed';
export { pdfErrors, pdfReadErrors } from './errors';
export { readSignatureImage } from './images';
export type { PageBox } from './pages';
export { pageBox } from './pages';
export type { PngImage } from './png';
export { decodePng } from './png';
export type { ByteRange, PreparedSignature, PrepareSignatureOptions } from './prepare';
export { defaultContentsSize } from './prepare';
export type {
  PdfRevision,
  PdfSignatureInfo,
  PdfSignatureReport,
  UnreadableSignatureInfo,
} from './readSignatures';
export { readSignatures } from './readSignatures';
