import { EngineError } from '../engineError';

/**
 * Every PDF reader busy and the queue full (pdf/worker/pool.ts): not a fault of the file, so a
 * caller that blames the file for the other refusals lets this one pass; try again in 5 s.
 */
export class PdfReaderBusy extends EngineError {
  constructor() {
    super('PDF_READER_BUSY', 'Too many PDFs are being read; try again shortly', {
      retryAfterSeconds: 5,
    });
  }
}

/**
 * The refusals of the PDF signing layer. Each is a distinct 4xx so that a caller (and a partner
 * reading the API answer) can tell a file that is not a PDF from one we cannot parse, an
 * encrypted one, or one whose certification signature forbids any change.
 */
export const pdfErrors = {
  notAPdf: () => new EngineError('NOT_A_PDF', 'The file is not a PDF document'),
  unreadable: (why: string) => new EngineError('PDF_UNREADABLE', `The PDF cannot be read: ${why}`),
  tooComplex: (why: string) =>
    new EngineError('PDF_TOO_COMPLEX', `The PDF is beyond what the service reads: ${why}`),
  /** Every reader busy and the queue full (pdf/worker/pool.ts): try again in a few seconds. */
  readerBusy: () => new PdfReaderBusy(),
  encrypted: () =>
    new EngineError('PDF_ENCRYPTED', 'The PDF is encrypted; encrypted PDFs cannot be signed'),
  changesNotAllowed: () =>
    new EngineError(
      'PDF_CHANGES_NOT_ALLOWED',
      'The PDF carries a certification signature that forbids any change (DocMDP /P 1)',
    ),
  fieldExists: (name: string) =>
    new EngineError('PDF_FIELD_EXISTS', `The PDF already has a field named "${name}"`, {
      field: 'fieldName',
    }),
  pageNotFound: (page: number, count: number) =>
    new EngineError('PDF_PAGE_NOT_FOUND', `Page ${page} does not exist (the PDF has ${count})`, {
      field: 'page',
    }),
  signatureTooLarge: (bytes: number, room: number) =>
    new EngineError(
      'PDF_SIGNATURE_TOO_LARGE',
      `The signature (${bytes} bytes) does not fit the placeholder (${room} bytes)`,
    ),
  placeholderNotFound: () =>
    new EngineError(
      'PDF_PLACEHOLDER_NOT_FOUND',
      'The prepared PDF has no signature placeholder at the expected offset',
    ),
};

/**
 * What any read of a PDF can answer (every read runs in the worker pool under the read limits of
 * budget.ts), for the documented answers of each operation whose handler reads one: 415
 * NOT_A_PDF, 422 PDF_UNREADABLE, PDF_ENCRYPTED and PDF_TOO_COMPLEX (a limit passed), 503
 * PDF_READER_BUSY (with Retry-After). Merged like the other lists:
 * `errorResponses(guardErrors, pdfReadErrors, {...})`.
 */
const readAnswers = [
  pdfErrors.notAPdf(),
  pdfErrors.unreadable(''),
  pdfErrors.encrypted(),
  pdfErrors.tooComplex(''),
  pdfErrors.readerBusy(),
];
export const pdfReadErrors = readAnswers.map((answer) => answer.code);

/**
 * What preparing a signer's revision answers (preparePdfSignature): a read's answers, and 422
 * PDF_CHANGES_NOT_ALLOWED for a certification signature that forbids every change.
 */
export const pdfPreparationErrors = [...pdfReadErrors, pdfErrors.changesNotAllowed().code];
