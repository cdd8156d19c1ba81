import { inspectPdf } from '../signing/activeContent';
import { dssUpdateOf, readDss } from '../signing/dss';
import { pageBox } from '../signing/pages';
import { prepareUpdate } from '../signing/prepare';
import { readSignatures } from '../signing/readSignatures';
import { type PdfTask, pdfTask } from './pool';

/**
 * The PDF reads the worker threads run. Each is a synchronous, pure function of plain data (see
 * pool.ts); this list is what a worker can run.
 */
export const readSignaturesTask = pdfTask('readSignatures', readSignatures);
export const readDssTask = pdfTask('readDss', readDss);
export const pageBoxTask = pdfTask('pageBox', pageBox);
export const inspectPdfTask = pdfTask('inspectPdf', inspectPdf);
export const prepareUpdateTask = pdfTask('prepareUpdate', prepareUpdate);
export const dssUpdateTask = pdfTask('dssUpdate', dssUpdateOf);

// biome-ignore lint/suspicious/noExplicitAny: a list of tasks of every signature, looked up by name.
export const pdfTasks: readonly PdfTask<any[], unknown>[] = [
  readSignaturesTask,
  readDssTask,
  pageBoxTask,
  inspectPdfTask,
  prepareUpdateTask,
  dssUpdateTask,
];
