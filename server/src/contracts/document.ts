import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { DomainError } from '../errors/domainError';
import { pdfInspectionCodes } from '../pdf/inspection';
import type { DocxConversionSettings } from '../platform/config';
import { assertDocxWithinLimits, docxArchiveCodes } from './docxArchive';

/** The Debian package that brings a headless `soffice` able to convert Writer documents. */
export const libreOfficePackage = 'libreoffice-writer-nogui';

export const documentCodes = {
  conversionUnavailable: 'DOCX_CONVERSION_UNAVAILABLE',
  conversionFailed: 'DOCX_CONVERSION_FAILED',
  conversionTimeout: 'DOCX_CONVERSION_TIMEOUT',
  conversionBusy: 'DOCX_CONVERSION_BUSY',
  tooLarge: docxArchiveCodes.tooLarge,
  notDocx: 'NOT_A_DOCX',
  activeContent: pdfInspectionCodes.activeContent,
} as const;

/** What a client refused for a full queue is told to wait, in seconds. */
const busyRetryAfterSeconds = 10;

/**
 * Conversions running at once, and the uploads waiting for one: a full queue refuses at once
 * with 503 DOCX_CONVERSION_BUSY and Retry-After, rather than holding ever more uploads.
 */
class ConversionSlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly settings: DocxConversionSettings) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running < this.settings.concurrency) {
      this.running += 1;
    } else if (this.waiting.length < this.settings.queueLength) {
      // The slot is handed over by the conversion that ends (running stays the same).
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      throw new DomainError(
        documentCodes.conversionBusy,
        `Every document converter is busy (${this.settings.concurrency} running, ${this.settings.queueLength} waiting); try again shortly or upload a PDF`,
        { field: 'file', retryAfterSeconds: busyRetryAfterSeconds },
      );
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}

/** One set of slots per configuration: per app (tests run several apps in one process). */
const slotsOf = new WeakMap<DocxConversionSettings, ConversionSlots>();

function conversionSlots(settings: DocxConversionSettings): ConversionSlots {
  let slots = slotsOf.get(settings);
  if (!slots) {
    slots = new ConversionSlots(settings);
    slotsOf.set(settings, slots);
  }
  return slots;
}

/** A .docx is a ZIP package: anything else is refused before LibreOffice sees it. */
async function assertZip(filePath: string): Promise<void> {
  const handle = await fs.open(filePath, 'r');
  try {
    const head = Buffer.alloc(4);
    await handle.read(head, 0, 4, 0);
    if (!head.equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))) {
      throw new DomainError(documentCodes.notDocx, 'The file is not a Word document (.docx)', {
        field: 'file',
      });
    }
  } finally {
    await handle.close();
  }
}

/**
 * Converts a .docx to PDF with LibreOffice headless in a fresh working directory: its own
 * profile (`-env:UserInstallation`), so runs never share or lock a profile; under an address
 * space limit (`prlimit --as`), at most `concurrency` at once with a bounded queue; killed (its
 * whole process group) when it outlives the time limit. An archive that would inflate past the
 * limits (docxArchive) is refused before LibreOffice starts. Returns the PDF's path inside
 * `workDir`, which the caller removes.
 */
export async function convertDocx(
  settings: DocxConversionSettings,
  docxPath: string,
  workDir: string,
): Promise<string> {
  await assertZip(docxPath);
  await assertDocxWithinLimits(docxPath);
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
  await conversionSlots(settings).run(() => runSoffice(settings, args, workDir));
  const output = path.join(workDir, 'contract.pdf');
  const produced = await fs.stat(output).catch(() => null);
  if (!produced?.isFile() || produced.size === 0) {
    throw new DomainError(
      documentCodes.conversionFailed,
      'LibreOffice could not convert the document to PDF',
      { field: 'file' },
    );
  }
  return output;
}

/** `command` as a path: itself when it names one, else found in PATH; null when absent. */
async function programPath(command: string): Promise<string | null> {
  const candidates = command.includes('/')
    ? [command]
    : (process.env.PATH ?? '').split(':').map((dir) => path.join(dir || '.', command));
  for (const candidate of candidates) {
    if (
      await fs.access(candidate, fs.constants.X_OK).then(
        () => true,
        () => false,
      )
    ) {
      return path.resolve(candidate);
    }
  }
  return null;
}

function conversionUnavailable(): DomainError {
  return new DomainError(
    documentCodes.conversionUnavailable,
    `.docx uploads need LibreOffice, which is not installed on this server (Debian package ${libreOfficePackage}); upload a PDF instead`,
    { field: 'file' },
  );
}

/** prlimit's exit statuses when it cannot start the program (util-linux EX_EXEC_*). */
const execFailed = new Set([126, 127]);

async function runSoffice(
  settings: DocxConversionSettings,
  args: string[],
  workDir: string,
): Promise<void> {
  const soffice = await programPath(settings.command);
  if (soffice === null) throw conversionUnavailable();
  // util-linux: part of every Debian system. Without it no conversion runs unbounded.
  const prlimit = await programPath('prlimit');
  if (prlimit === null) {
    throw new DomainError(
      documentCodes.conversionUnavailable,
      '.docx uploads need prlimit (Debian package util-linux) to cap the converter’s memory; upload a PDF instead',
      { field: 'file' },
    );
  }
  const limited = [`--as=${settings.memoryBytes}`, '--', soffice, ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(prlimit, limited, {
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
      if (error.code === 'ENOENT' || error.code === 'EACCES') reject(conversionUnavailable());
      else reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut) {
        reject(
          new DomainError(
            documentCodes.conversionTimeout,
            `The conversion of the document took longer than ${settings.timeoutMs / 1000} s`,
            { field: 'file' },
          ),
        );
      } else if (code !== null && execFailed.has(code)) {
        reject(conversionUnavailable());
      } else if (code !== 0) {
        reject(
          new DomainError(
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
