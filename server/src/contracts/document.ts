import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { ApiError } from '../errors/apiError';
import { describeActiveContent, type PdfInspection } from '../pdf/signing/activeContent';
import { runPdfTask } from '../pdf/worker/pool';
import { inspectPdfTask } from '../pdf/worker/tasks';
import type { DocxConversionSettings } from '../platform/config';

/** The Debian package that brings a headless `soffice` able to convert Writer documents. */
export const libreOfficePackage = 'libreoffice-writer-nogui';

export const documentCodes = {
  conversionUnavailable: 'DOCX_CONVERSION_UNAVAILABLE',
  conversionFailed: 'DOCX_CONVERSION_FAILED',
  conversionTimeout: 'DOCX_CONVERSION_TIMEOUT',
  notDocx: 'NOT_A_DOCX',
  activeContent: 'PDF_ACTIVE_CONTENT',
} as const;

/** Findings named in the refusal's message at most (the rest counted). */
const namedFindings = 5;

/**
 * Checks that the file really is a PDF we can sign later, with the signing engine's own reader
 * in a PDF worker thread, within the read limits: 415 NOT_A_PDF (another format renamed .pdf),
 * 422 PDF_ENCRYPTED, PDF_UNREADABLE, PDF_TOO_COMPLEX; and that it holds no active content
 * (JavaScript, launch actions, embedded files, rich media, XFA): 422 PDF_ACTIVE_CONTENT.
 * Answers how many signatures it carries.
 */
export async function inspectSignablePdf(filePath: string): Promise<PdfInspection> {
  const inspection = await runPdfTask(inspectPdfTask, filePath);
  const found = inspection.activeContent;
  if (found.length > 0) {
    const named = found.slice(0, namedFindings).map(describeActiveContent).join('; ');
    const more = found.length > namedFindings ? ` and ${found.length - namedFindings} more` : '';
    throw new ApiError(
      422,
      documentCodes.activeContent,
      `The PDF holds active content, which contracts may not: ${named}${more}`,
      { field: 'file' },
    );
  }
  return inspection;
}

/** A .docx is a ZIP package: anything else is refused before LibreOffice sees it. */
async function assertZip(filePath: string): Promise<void> {
  const handle = await fs.open(filePath, 'r');
  try {
    const head = Buffer.alloc(4);
    await handle.read(head, 0, 4, 0);
    if (!head.equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))) {
      throw new ApiError(415, documentCodes.notDocx, 'The file is not a Word document (.docx)', {
        field: 'file',
      });
    }
  } finally {
    await handle.close();
  }
}

/**
 * Converts a .docx to PDF with LibreOffice headless in a fresh working directory: its own
 * profile (`-env:UserInstallation`), so runs never share or lock a profile; killed (its whole
 * process group) when it outlives the time limit. Returns the PDF's path inside `workDir`,
 * which the caller removes.
 */
export async function convertDocx(
  settings: DocxConversionSettings,
  docxPath: string,
  workDir: string,
): Promise<string> {
  await assertZip(docxPath);
  const profile = path.join(workDir, 'profile');
  const input = path.join(workDir, 'contract.docx');
  await fs.mkdir(profile, { recursive: true, mode: 0o700 });
  await fs.copyFile(docxPath, input);
  const args = [
    `-env:UserInstallation=file://${profile}`,
    '--headless',
    '--norestore',
    '--nologo',
    '--nodefault',
    '--nolockcheck',
    '--convert-to',
    'pdf:writer_pdf_Export',
    '--outdir',
    workDir,
    input,
  ];
  await runSoffice(settings, args, workDir);
  const output = path.join(workDir, 'contract.pdf');
  const produced = await fs.stat(output).catch(() => null);
  if (!produced?.isFile() || produced.size === 0) {
    throw new ApiError(
      422,
      documentCodes.conversionFailed,
      'LibreOffice could not convert the document to PDF',
      { field: 'file' },
    );
  }
  return output;
}

function runSoffice(
  settings: DocxConversionSettings,
  args: string[],
  workDir: string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(settings.command, args, {
      stdio: ['ignore', 'ignore', 'pipe'],
      // Its own process group: a timeout kills soffice.bin with the launcher script.
      detached: true,
      // LibreOffice writes caches under HOME too: keep them in the run's directory.
      env: { ...process.env, HOME: workDir },
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < 4096) stderr += chunk;
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, settings.timeoutMs);
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (error.code === 'ENOENT' || error.code === 'EACCES') {
        reject(
          new ApiError(
            415,
            documentCodes.conversionUnavailable,
            `.docx uploads need LibreOffice, which is not installed on this server (Debian package ${libreOfficePackage}); upload a PDF instead`,
            { field: 'file' },
          ),
        );
      } else reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut) {
        reject(
          new ApiError(
            422,
            documentCodes.conversionTimeout,
            `The conversion of the document took longer than ${settings.timeoutMs / 1000} s`,
            { field: 'file' },
          ),
        );
      } else if (code !== 0) {
        reject(
          new ApiError(
            422,
            documentCodes.conversionFailed,
            `LibreOffice could not convert the document (exit ${code})`,
            { field: 'file' },
          ),
        );
      } else resolve();
    });
  });
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** A private working directory for one conversion, under the FileStore's temp directory. */
export async function conversionDirectory(tempDir: string): Promise<string> {
  const directory = path.join(tempDir, `docx-${crypto.randomUUID()}`);
  await fs.mkdir(directory, { recursive: true, mode: 0o700 });
  return directory;
}
