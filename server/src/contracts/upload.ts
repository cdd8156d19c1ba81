import crypto from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Busboy as BusboyFactory, BusboyFileStream } from '@fastify/busboy';
import type { ContractSourceKind } from '../db/schema';
import { ApiError } from '../errors/apiError';

/** The upload limits of contract creation. */
export const uploadLimits = {
  /** The spec's file limit, 50 MB (MiB, as every size limit of the service). */
  fileBytes: 50 * 1024 * 1024,
  /** Text fields (the signers JSON is the largest). */
  fieldBytes: 64 * 1024,
  fields: 20,
  /** Multipart framing and fields on top of the file, for the Content-Length pre-check. */
  overheadBytes: 1024 * 1024,
} as const;

export const uploadCodes = {
  tooLarge: 'FILE_TOO_LARGE',
  unsupportedType: 'UNSUPPORTED_FILE_TYPE',
  badMultipart: 'INVALID_MULTIPART',
} as const;

export interface UploadedFile {
  /** A temp file holding the part's bytes, on the FileStore's filesystem. */
  tempPath: string;
  /** The name the client gave, NFC. */
  fileName: string;
  kind: ContractSourceKind;
  size: number;
}

export interface ReceivedUpload {
  fields: Record<string, string>;
  file: UploadedFile | null;
}

const tooLarge = () =>
  new ApiError(
    413,
    uploadCodes.tooLarge,
    `The file exceeds ${uploadLimits.fileBytes / 1024 / 1024} MB`,
    { field: 'file' },
  );

function kindOf(fileName: string): ContractSourceKind | null {
  const extension = path.extname(fileName).toLowerCase();
  return extension === '.pdf' ? 'pdf' : extension === '.docx' ? 'docx' : null;
}

/**
 * Reads a multipart/form-data body as it streams: text fields into memory (each capped), the one
 * `file` part straight to a temp file under `tempDir`, never the whole upload in memory. A file
 * over 50 MB stops the reading at once with 413. On any failure the temp file is removed and
 * the error thrown; on success the caller owns the temp file.
 */
export async function receiveUpload(request: Request, tempDir: string): Promise<ReceivedUpload> {
  const contentType = request.headers.get('content-type') ?? '';
  if (!/^multipart\/form-data\s*;/i.test(contentType) || request.body === null) {
    throw new ApiError(
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      'Send the contract as multipart/form-data with a file part named "file"',
    );
  }
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > uploadLimits.fileBytes + uploadLimits.overheadBytes) throw tooLarge();
  await fs.mkdir(tempDir, { recursive: true, mode: 0o700 });
  // Loaded with the first upload: start-up does not need the multipart parser.
  const { Busboy } = await import('@fastify/busboy');

  const source = Readable.fromWeb(request.body as unknown as WebReadableStream<Uint8Array>);
  const fields: Record<string, string> = {};
  let file: UploadedFile | null = null;
  let failure: unknown = null;
  const writes: Promise<void>[] = [];
  let activeStream: BusboyFileStream | null = null;

  const outcome = new Promise<void>((resolve, reject) => {
    let settled = false;
    const fail = (error: unknown) => {
      failure ??= error;
      if (settled) return;
      settled = true;
      source.unpipe();
      source.destroy();
      // Ends the temp-file pipeline too, so its cleanup can run.
      activeStream?.destroy();
      reject(failure);
    };
    let busboy: ReturnType<typeof BusboyFactory>;
    try {
      busboy = Busboy({
        headers: { 'content-type': contentType },
        limits: {
          fileSize: uploadLimits.fileBytes,
          files: 1,
          fields: uploadLimits.fields,
          fieldSize: uploadLimits.fieldBytes,
        },
      });
    } catch (error) {
      reject(new ApiError(400, uploadCodes.badMultipart, (error as Error).message));
      return;
    }
    busboy.on('file', (name: string, stream: BusboyFileStream, fileName: string) => {
      if (name !== 'file') {
        stream.resume();
        fail(errorOfField(name, 'is not a file field; send the contract in "file"'));
        return;
      }
      const kind = kindOf(fileName);
      if (kind === null) {
        stream.resume();
        fail(
          new ApiError(415, uploadCodes.unsupportedType, 'The file must be a .pdf or a .docx', {
            field: 'file',
          }),
        );
        return;
      }
      const tempPath = path.join(tempDir, `upload-${crypto.randomUUID()}.${kind}`);
      const received: UploadedFile = {
        tempPath,
        fileName: fileName.normalize('NFC'),
        kind,
        size: 0,
      };
      file = received;
      activeStream = stream;
      stream.on('data', (chunk: Buffer) => {
        received.size += chunk.length;
      });
      stream.on('limit', () => fail(tooLarge()));
      writes.push(
        pipeline(stream, createWriteStream(tempPath, { flags: 'wx', mode: 0o600 })).catch(
          (error: unknown) => fail(error),
        ),
      );
    });
    busboy.on(
      'field',
      (name: string, value: string, _nameTruncated: boolean, truncated: boolean) => {
        if (truncated) {
          fail(errorOfField(name, `is longer than ${uploadLimits.fieldBytes} bytes`));
          return;
        }
        fields[name] = value;
      },
    );
    busboy.on('filesLimit', () => fail(errorOfField('file', 'must be sent once')));
    busboy.on('fieldsLimit', () => fail(errorOfField('form', 'has too many fields')));
    busboy.on('error', (error: unknown) =>
      fail(
        new ApiError(400, uploadCodes.badMultipart, `Malformed multipart body: ${String(error)}`),
      ),
    );
    busboy.on('finish', () => {
      void Promise.all(writes).then(() => {
        if (failure !== null) return fail(failure);
        settled = true;
        resolve();
      });
    });
    source.on('error', (error: unknown) => fail(error));
    source.pipe(busboy);
  });

  try {
    await outcome;
  } catch (error) {
    await Promise.allSettled(writes);
    const written = file as UploadedFile | null;
    if (written) await fs.rm(written.tempPath, { force: true });
    throw error;
  }
  return { fields, file };
}

function errorOfField(field: string, problem: string): ApiError {
  return new ApiError(400, 'VALIDATION_ERROR', `${field}: ${problem}`, {
    field,
    detailCode: 'INVALID',
  });
}
