import fs from 'node:fs/promises';
import type { DssMaterial } from './signing/dss';
import {
  layOutSignature,
  type PreparedSignature,
  type PrepareSignatureOptions,
  writePreparedFile,
} from './signing/prepare';
import { runPdfTask } from './worker/pool';
import { dssUpdateTask, prepareUpdateTask } from './worker/tasks';

/**
 * The two writes of a signing turn that read the source PDF, each reading in a PDF worker
 * thread (`worker/`) the synchronous code of `signing/` runs there.
 */

/**
 * Prepares a PDF for one more signature: copies the source unchanged (streamed) to a new temp
 * file and appends one incremental update with the signature field, its widget on a page, the
 * AcroForm entry and the `/Sig` dictionary with its `/ByteRange` and `/Contents` placeholder.
 * Refuses with an engine error, before writing anything, what cannot be signed.
 */
export async function preparePdfSignature(
  source: string,
  options: PrepareSignatureOptions,
): Promise<PreparedSignature> {
  const layout = await layOutSignature(options);
  const update = await runPdfTask(prepareUpdateTask, source, layout.options, layout.text);
  return writePreparedFile(source, layout.options, update);
}

/**
 * Appends one incremental update that adds a `/DSS` dictionary to the catalog (`/Certs`,
 * `/OCSPs`, `/CRLs`: arrays of streams), keeping the entries of an existing DSS. The file is
 * extended in place; no earlier byte changes, so every signature stays valid.
 */
export async function appendDss(filePath: string, material: DssMaterial): Promise<void> {
  const update = await runPdfTask(dssUpdateTask, filePath, material);
  if (update) await fs.appendFile(filePath, update);
}
