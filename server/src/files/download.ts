import fs from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { AppDeps } from '../context';
import { DomainError } from '../errors/domainError';
import { nodeBodyResponse } from '../platform/nodeBody';
import type { NewestFile } from './queries';

export function fileNotFound(fileUuid: string): DomainError {
  return new DomainError('FILE_NOT_FOUND', `No file ${fileUuid}`, { field: 'fileUuid' });
}

/** The download name: the title, NFC, without path separators or controls, with `.pdf` for PDFs. */
export function downloadName(title: string, mimeType: string): string {
  const cleaned = title
    .normalize('NFC')
    .replace(/[\p{Cc}/\\]/gu, '_')
    .trim();
  const name = cleaned === '' ? 'file' : cleaned;
  return mimeType === 'application/pdf' && !/\.pdf$/i.test(name) ? `${name}.pdf` : name;
}

/** RFC 5987 value: UTF-8, percent-encoded except the attr-chars. */
function extendedValue(name: string): string {
  return encodeURIComponent(name).replace(
    /['()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** ASCII fallback for old clients: "Hợp đồng" becomes "Hop dong". */
function asciiFallback(name: string): string {
  return (
    name
      .normalize('NFD')
      .replace(/[\u0300-\u036f]/g, '')
      // Escaped (đ, Đ): an all-ASCII bundle is held by V8 at one byte a character, not two.
      .replace(/\u0111/g, 'd')
      .replace(/\u0110/g, 'D')
      .replace(/[^\x20-\x7e]/g, '_')
      .replace(/["\\]/g, '_')
  );
}

/**
 * `attachment; filename="<ASCII>"`, plus `filename*=UTF-8''<encoded>` (RFC 6266 / 5987) when the
 * name is not plain ASCII, so Vietnamese titles arrive intact in every browser and client.
 */
export function contentDisposition(name: string): string {
  const ascii = asciiFallback(name);
  const plain = `attachment; filename="${ascii}"`;
  return ascii === name ? plain : `${plain}; filename*=UTF-8''${extendedValue(name)}`;
}

/** The spec's download headers for a file of this size. */
function downloadHeaders(
  file: Pick<NewestFile, 'mimeType' | 'title'>,
  size: number,
): Record<string, string> {
  return {
    'Content-Type': file.mimeType,
    'Content-Disposition': contentDisposition(downloadName(file.title, file.mimeType)),
    'Content-Length': String(size),
    'Cache-Control': 'private, no-store',
  };
}

/** The server pipes `stream` to the socket itself (see platform/nodeBody.ts). */
function streamResponse(stream: Readable, headers: Record<string, string>): Response {
  return nodeBodyResponse(stream, { status: 200, headers });
}

/**
 * Streams a temp file made for this one response (a rendered document) and deletes it: the
 * name is unlinked as soon as the file is open, so nothing is left behind whether the client
 * reads to the end, aborts, or never reads.
 */
export async function temporaryFileResponse(
  filePath: string,
  file: Pick<NewestFile, 'mimeType' | 'title'>,
): Promise<Response> {
  const handle = await fs.open(filePath, 'r');
  try {
    const { size } = await handle.stat();
    await fs.rm(filePath, { force: true });
    return streamResponse(handle.createReadStream(), downloadHeaders(file, size));
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** How long a presigned GetObject URL of a redirected download is valid. */
export const storeDownloadLifetimeSeconds = 5 * 60;

/**
 * Streams the newest version of a file with the spec's headers (Content-Type, Content-Disposition,
 * Content-Length, Cache-Control `private, no-store`). The bytes flow from the store to the
 * socket; the file is never held in memory.
 *
 * A download (`redirect`, never an inline preview, whose page may only connect to this origin)
 * answers 302 to a presigned GetObject URL of the bucket instead when the store makes them
 * (FILE_STORE=s3 with S3_PRESIGNED_DOWNLOADS=1): the same headers come from the bucket. The URL
 * is a credential (its X-Amz-Signature and X-Amz-Credential are redacted from the logs).
 */
export async function fileResponse(
  deps: Pick<AppDeps, 'files'>,
  file: Pick<NewestFile, 'sha256' | 'mimeType' | 'title'>,
  options: { redirect?: boolean } = {},
): Promise<Response> {
  if (options.redirect && deps.files.presignDownload) {
    const headers = downloadHeaders(file, 0);
    const location = await deps.files.presignDownload(
      file.sha256,
      {
        contentType: file.mimeType,
        contentDisposition: headers['Content-Disposition'] ?? 'attachment',
      },
      storeDownloadLifetimeSeconds,
    );
    if (location !== undefined) {
      return new Response(null, {
        status: 302,
        headers: { Location: location, 'Cache-Control': 'private, no-store' },
      });
    }
  }
  const opened = await deps.files.open(file.sha256);
  return streamResponse(opened.stream, downloadHeaders(file, opened.size));
}
