import fs from 'node:fs/promises';
import type { AppDeps } from '../context';
import type { FileKind } from '../db/schema';
import { downloadPdf } from '../outbound/downloadPdf';
import { inspectSignablePdf } from '../pdf/inspection';
import type { StoredFile } from '../storage/fileStore';
import { renderTemplate } from '../templates/service';
import type { FileInputValue } from './schemas';

/**
 * "Handle files": every `files[]` and `attachments[]` item becomes stored bytes before the
 * creation transaction opens (network I/O never runs inside a transaction). What was stored is
 * the caller's to `keep` after commit or `discard` on any failure.
 */

export interface SourceFile {
  kind: FileKind;
  /** 1-based position within its kind. */
  position: number;
  title: string;
  ecmClassCode: string | null;
  mimeType: string;
  stored: StoredFile;
}

/** A file item with its place in the request and its class as the class rule settled it. */
export interface FileRequest {
  kind: FileKind;
  position: number;
  /** `files.0`, `attachments.3`: the prefix of `details.field`. */
  at: string;
  input: FileInputValue;
  ecmClassCode: string | null;
}

/** Downloads (or renders) at most this many files at a time. */
const parallelFetches = 4;

/** The title of a file sent without one: the last segment of its URL, else the template code. */
export function defaultTitle(input: FileInputValue): string {
  if (input.source === 'template') return input.templateCode ?? 'template';
  try {
    const segments = new URL(input.fileUrl ?? '').pathname.split('/');
    const last = decodeURIComponent(segments[segments.length - 1] ?? '').trim();
    if (last !== '') return last.slice(0, 255);
  } catch {
    // A URL the download refuses anyway; the title does not matter.
  }
  return 'document.pdf';
}

async function storeOne(
  deps: AppDeps,
  organizationId: number,
  request: FileRequest,
): Promise<StoredFile> {
  const { input, at } = request;
  // A rendered template is the service's own output (pdf-lib fills the organization's template,
  // which its administrators uploaded), so it is not inspected; what a partner's URL serves is.
  if (input.source === 'template') {
    return renderTemplate(
      deps,
      organizationId,
      input.templateCode!,
      input.templateData ?? {},
      `${at}.templateCode`,
    );
  }
  const downloaded = await downloadPdf(input.fileUrl!, {
    destination: deps.files.tempDir,
    allowlist: deps.config.outboundAllowlist,
    field: `${at}.fileUrl`,
  });
  try {
    // The same inspection as a contract upload: readable within the read limits, not
    // encrypted, no active content.
    await inspectSignablePdf(downloaded.path, `${at}.fileUrl`);
  } catch (error) {
    await fs.rm(downloaded.path, { force: true });
    throw error;
  }
  return deps.files.putFile(downloaded.path);
}

/** Ends the claims of a failed creation: deletes the bytes nobody else stored meanwhile. */
export async function discardFiles(deps: AppDeps, files: SourceFile[]): Promise<void> {
  for (const file of files) {
    try {
      await deps.files.remove(file.stored);
    } catch (error) {
      deps.logger.error(
        { err: error, sha256: file.stored.sha256 },
        'rollback of a stored file failed',
      );
    }
  }
}

/** After commit: the rows reference the bytes now. */
export function keepFiles(deps: AppDeps, files: SourceFile[]): void {
  for (const file of files) deps.files.keep(file.stored);
}

/**
 * Stores every requested file, a few at a time, in request order. On the first failure no new
 * fetch starts, those in flight finish, everything stored is discarded and the first failure
 * (in request order) is thrown.
 */
export async function storeFiles(
  deps: AppDeps,
  organizationId: number,
  requests: FileRequest[],
): Promise<SourceFile[]> {
  const results: (SourceFile | undefined)[] = new Array(requests.length);
  const failures: { index: number; error: unknown }[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (failures.length === 0 && next < requests.length) {
      const index = next++;
      const request = requests[index]!;
      try {
        const stored = await storeOne(deps, organizationId, request);
        results[index] = {
          kind: request.kind,
          position: request.position,
          title: request.input.title ?? defaultTitle(request.input),
          ecmClassCode: request.ecmClassCode,
          mimeType: 'application/pdf',
          stored,
        };
      } catch (error) {
        failures.push({ index, error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallelFetches, requests.length) }, worker));
  const stored = results.filter((file): file is SourceFile => file !== undefined);
  if (failures.length > 0) {
    await discardFiles(deps, stored);
    failures.sort((a, b) => a.index - b.index);
    throw failures[0]!.error;
  }
  return stored;
}
