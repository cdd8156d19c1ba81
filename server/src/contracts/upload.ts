import crypto from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Busboy as BusboyFactory, BusboyFileStream } from '@fastify/busboy';
import type { ContractSourceKind } from '../db/schema';
import { DomainError } from '../errors/domainError';

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

/** 413 FILE_TOO_LARGE: the file, or the whole upload by its Content-Length. */
export const tooLarge = () =>
  new DomainError(
    uploadCodes.tooLarge,
    `The file exceeds ${uploadLimits.fileBytes / 1024 / 1024} MB`,
    { field: 'file' },
  );

function kindOf(fileName: string): ContractSourceKind | null {
  const extension = path.extname(fileName).toLowerCase();
  return extension === '.pdf' ? 'pdf' : extension === '.docx' ? 'docx' : null;
}

/** 400 INVALID_MULTIPART naming the part at fault. */
function invalidPart(field: string, problem: string): DomainError {
  return new DomainError(uploadCodes.badMultipart, `${field}: ${problem}`, { field });
}

/**
 * Reads a multipart/form-data body as it streams: text fields into memory (each capped), the one
 * `file` part straight to a temp file under `tempDir`, never the whole upload in memory. The
 * parts allowed are `file` (once, a file) and the names in `textFields` (each once, text);
 * anything else stops the reading at once with 400 INVALID_MULTIPART naming the part, as a file
 * over 50 MB does with 413. On any failure the temp file is closed and removed before the error
 * is thrown; on success the caller owns the temp file.
 */
export async function receiveUpload(
  request: Request,
  tempDir: string,
  textFields: ReadonlySet<string>,
): Promise<ReceivedUpload> {
  const contentType = request.headers.get('content-type') ?? '';
  if (!/^multipart\/form-data\s*;/i.test(contentType) || request.body === null) {
    throw new DomainError(
      'UNSUPPORTED_MEDIA_TYPE',
      'Send the contract as multipart/form-data with a file part named "file"',
    );
  }
  await fs.mkdir(tempDir, { recursive: true, mode: 0o700 });
  // Loaded with the first upload: start-up does not need the multipart parser.
  const { Busboy } = await import('@fastify/busboy');

  const source = Readable.fromWeb(request.body as unknown as WebReadableStream<Uint8Array>);
  const fields: Record<string, string> = {};
  let file: UploadedFile | null = null;
  /** The temp file's stream: destroyed on failure, so its descriptor never outlives the request. */
  let sink: WriteStream | null = null;
  let written: Promise<void> = Promise.resolve();

  const outcome = new Promise<void>((resolve, reject) => {
    let settled = false;
    let busboy: ReturnType<typeof BusboyFactory>;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      // Nothing more is read: the server discards what is in flight and answers.
      source.unpipe();
      source.destroy();
      busboy?.removeAllListeners();
      sink?.destroy();
      reject(error);
    };
    try {
      busboy = Busboy({
        headers: { 'content-type': contentType },
        limits: {
          fileSize: uploadLimits.fileBytes,
          // One more than allowed of each, so that the extra one is seen and named.
          files: 2,
          fields: uploadLimits.fields,
          fieldSize: uploadLimits.fieldBytes,
        },
      });
    } catch (error) {
      reject(new DomainError(uploadCodes.badMultipart, (error as Error).message));
      return;
    }
    busboy.on('file', (name: string, stream: BusboyFileStream, fileName: string) => {
      if (settled) {
        stream.resume();
        return;
      }
      if (name !== 'file') {
        stream.resume();
        fail(invalidPart(name, 'is not a part of contract creation; send the contract in "file"'));
        return;
      }
      if (file !== null) {
        stream.resume();
        fail(invalidPart('file', 'must be sent once'));
        return;
      }
      const kind = kindOf(fileName);
      if (kind === null) {
        stream.resume();
        fail(
          new DomainError(uploadCodes.unsupportedType, 'The file must be a .pdf or a .docx', {
            field: 'file',
          }),
        );
        return;
      }
      const received: UploadedFile = {
        tempPath: path.join(tempDir, `upload-${crypto.randomUUID()}.${kind}`),
        fileName: fileName.normalize('NFC'),
        kind,
        size: 0,
      };
      file = received;
      stream.on('data', (chunk: Buffer) => {
        received.size += chunk.length;
      });
      stream.on('limit', () => fail(tooLarge()));
      sink = createWriteStream(received.tempPath, { flags: 'wx', mode: 0o600 });
      written = pipeline(stream, sink);
      written.catch((error: unknown) => fail(error));
    });
    busboy.on(
      'field',
      (name: string, value: string, _nameTruncated: boolean, truncated: boolean) => {
        if (name === 'file') return fail(invalidPart('file', 'must be a file part'));
        if (!textFields.has(name)) {
          return fail(invalidPart(name, 'is not a field of contract creation'));
        }
        if (Object.hasOwn(fields, name)) return fail(invalidPart(name, 'must be sent once'));
        if (truncated) {
          return fail(errorOfField(name, `is longer than ${uploadLimits.fieldBytes} bytes`));
        }
        fields[name] = value;
      },
    );
    busboy.on('filesLimit', () => fail(invalidPart('file', 'must be sent once')));
    busboy.on('fieldsLimit', () => fail(invalidPart('form', 'has too many fields')));
    busboy.on('error', (error: unknown) =>
      fail(new DomainError(uploadCodes.badMultipart, `Malformed multipart body: ${String(error)}`)),
    );
    busboy.on('finish', () => {
      written.then(
        () => {
          if (settled) return;
          settled = true;
          resolve();
        },
        (error: unknown) => fail(error),
      );
    });
    source.on('error', (error: unknown) => fail(error));
    source.pipe(busboy);
  });

  try {
    await outcome;
  } catch (error) {
    // The sink was destroyed: the write settles at once and its descriptor is closed.
    await written.catch(() => {});
    const received = file as UploadedFile | null;
    if (received) await fs.rm(received.tempPath, { force: true });
    throw error;
  }
  return { fields, file };
}

function errorOfField(field: string, problem: string): DomainError {
  return new DomainError('VALIDATION_ERROR', `${field}: ${problem}`, {
    field,
    detailCode: 'INVALID',
  });
}
