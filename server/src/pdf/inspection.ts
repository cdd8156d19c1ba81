import { EngineError } from './engineError';
import { describeActiveContent, type PdfInspection } from './signing/activeContent';
import { PdfReaderBusy } from './signing/errors';
import { runPdfTask } from './worker/pool';
import { inspectPdfTask } from './worker/tasks';

/** The refusal of a PDF that reads but carries what no document to sign may carry. */
export const pdfInspectionCodes = { activeContent: 'PDF_ACTIVE_CONTENT' } as const;

/** Findings named in the refusal's message at most (the rest counted). */
const namedFindings = 5;

/**
 * Checks that a file from outside (a contract upload, a dossier's fetched file) really is a PDF
 * we can sign later, with the signing engine's own reader in a PDF worker thread, within the
 * read limits: 415 NOT_A_PDF (another format renamed .pdf), 422 PDF_ENCRYPTED, PDF_UNREADABLE,
 * PDF_TOO_COMPLEX, 503 PDF_READER_BUSY; and that it holds no active content (JavaScript, launch
 * actions, embedded files, rich media, XFA): 422 PDF_ACTIVE_CONTENT. Every 4xx refusal names
 * `field`, the file's place in the request. Answers how many signatures it carries.
 */
export async function inspectSignablePdf(filePath: string, field: string): Promise<PdfInspection> {
  let inspection: PdfInspection;
  try {
    inspection = await runPdfTask(inspectPdfTask, filePath);
  } catch (error) {
    // The file's own refusals name the request's field; a busy reader is not the file's fault.
    const fileRefused =
      error instanceof EngineError &&
      !(error instanceof PdfReaderBusy) &&
      error.field === undefined;
    if (fileRefused) throw new EngineError(error.code, error.message, { field });
    throw error;
  }
  const found = inspection.activeContent;
  if (found.length > 0) {
    const named = found.slice(0, namedFindings).map(describeActiveContent).join('; ');
    const more = found.length > namedFindings ? ` and ${found.length - namedFindings} more` : '';
    throw new EngineError(
      pdfInspectionCodes.activeContent,
      `The PDF holds active content, which a document to sign may not: ${named}${more}`,
      { field },
    );
  }
  return inspection;
}
