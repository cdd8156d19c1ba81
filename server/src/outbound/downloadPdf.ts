import crypto from 'node:crypto';
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { DomainError } from '../errors/domainError';
import type { Allowlist } from './addressPolicy';
import {
  OutboundFailure,
  type OutboundProblem,
  type Resolver,
  type SafeResponse,
  safeHttpsRequest,
} from './safeFetch';

/** The spec's `fileUrl` limits: under 50 MB, an answer within 30 seconds. */
export const fileUrlLimits = { maxBytes: 50 * 1024 * 1024, timeoutMs: 30_000 } as const;

/** Error codes of a `fileUrl` download (see docs/decisions.md, "Outbound HTTPS"). */
export const fileUrlCodes = {
  invalid: 'FILE_URL_INVALID',
  forbiddenAddress: 'FILE_URL_FORBIDDEN_ADDRESS',
  redirect: 'FILE_URL_REDIRECT',
  httpStatus: 'FILE_URL_HTTP_STATUS',
  timeout: 'FILE_URL_TIMEOUT',
  tls: 'FILE_URL_TLS',
  unreachable: 'FILE_URL_UNREACHABLE',
  tooLarge: 'FILE_TOO_LARGE',
  notPdf: 'FILE_NOT_PDF',
} as const;

const pdfSignature = Buffer.from('%PDF-', 'latin1');

export interface DownloadPdfOptions {
  /** Directory of the temp file; put it on the file store's filesystem so adoption is a rename. */
  destination: string;
  allowlist?: Allowlist;
  maxBytes?: number;
  timeoutMs?: number;
  /** `details.field` of every error, e.g. `files.0.fileUrl`. */
  field?: string;
  resolver?: Resolver;
  userAgent?: string;
}

export interface DownloadedPdf {
  /** A temp file the caller now owns: adopt it into the file store or delete it. */
  path: string;
  size: number;
  sha256: string;
}

/** Outbound failures as the integration API reports them. */
const translations: Record<OutboundProblem, string> = {
  invalidUrl: fileUrlCodes.invalid,
  forbiddenAddress: fileUrlCodes.forbiddenAddress,
  timeout: fileUrlCodes.timeout,
  tls: fileUrlCodes.tls,
  unreachable: fileUrlCodes.unreachable,
  tooLarge: fileUrlCodes.tooLarge,
};

/**
 * Downloads a partner's `fileUrl` to a temp file under `destination`, streaming: the bytes are
 * hashed and written as they arrive, and the download stops as soon as it is known to be too
 * large or not a PDF. Throws DomainError (400, 413, 415 or 502) with `details.field` = `field`.
 */
export async function downloadPdf(
  url: string,
  options: DownloadPdfOptions,
): Promise<DownloadedPdf> {
  const maxBytes = options.maxBytes ?? fileUrlLimits.maxBytes;
  const timeoutMs = options.timeoutMs ?? fileUrlLimits.timeoutMs;
  const fail = (code: string, message: string): DomainError =>
    new DomainError(code, message, options.field === undefined ? {} : { field: options.field });
  const translate = (error: unknown): unknown => {
    if (!(error instanceof OutboundFailure)) return error;
    const code = translations[error.problem];
    const message =
      error.problem === 'tooLarge' ? `The file is larger than ${maxBytes} bytes` : error.message;
    return fail(code, message);
  };

  let response: SafeResponse;
  try {
    response = await safeHttpsRequest(url, {
      method: 'GET',
      headers: {
        Accept: 'application/pdf, */*;q=0.1',
        'Accept-Encoding': 'identity',
        'User-Agent': options.userAgent ?? 'ESign-FileFetch/1.0',
      },
      allowlist: options.allowlist,
      timeoutMs,
      maxResponseBytes: maxBytes,
      resolver: options.resolver,
    });
  } catch (error) {
    throw translate(error);
  }

  const refusal = refuseBeforeBody(response, maxBytes, fail);
  if (refusal !== null) {
    response.discard();
    throw refusal;
  }

  const tempPath = path.join(options.destination, `fetch-${crypto.randomUUID()}.part`);
  let file: FileHandle;
  try {
    file = await fs.open(tempPath, 'wx', 0o600);
  } catch (error) {
    response.discard();
    throw error;
  }
  const hash = crypto.createHash('sha256');
  let size = 0;
  let head = Buffer.alloc(0);
  try {
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      if (head.length < pdfSignature.length) {
        head = Buffer.concat([head, chunk.subarray(0, pdfSignature.length - head.length)]);
        if (!pdfSignature.subarray(0, head.length).equals(head)) throw notPdf(fail);
      }
      hash.update(chunk);
      size += chunk.length;
      await file.write(chunk);
    }
    if (head.length < pdfSignature.length) throw notPdf(fail);
    await file.close();
  } catch (error) {
    response.discard();
    await file.close().catch(() => undefined);
    await fs.rm(tempPath, { force: true });
    throw translate(error);
  }
  return { path: tempPath, size, sha256: hash.digest('hex') };
}

function notPdf(fail: (code: string, message: string) => DomainError): DomainError {
  return fail(fileUrlCodes.notPdf, 'The file is not a PDF (it does not start with %PDF-)');
}

/** What the status line and headers already rule out: redirects, errors, announced size. */
function refuseBeforeBody(
  response: SafeResponse,
  maxBytes: number,
  fail: (code: string, message: string) => DomainError,
): DomainError | null {
  if (response.status >= 300 && response.status < 400) {
    return fail(
      fileUrlCodes.redirect,
      `The file URL answered with a redirect (${response.status}); redirects are not followed`,
    );
  }
  if (response.status !== 200) {
    return fail(
      fileUrlCodes.httpStatus,
      `The file URL answered with HTTP status ${response.status} instead of 200`,
    );
  }
  const announced = Number(response.headers['content-length'] ?? Number.NaN);
  if (announced > maxBytes) {
    return fail(fileUrlCodes.tooLarge, `The file is larger than ${maxBytes} bytes`);
  }
  return null;
}
