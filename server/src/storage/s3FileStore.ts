import crypto from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  paginateListObjectsV2,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { DomainError } from '../errors/domainError';
import type { Clock } from '../platform/clock';
import type { S3Settings } from '../platform/config';
import { ContentClaims } from './claims';
import type {
  FileStore,
  OpenedFile,
  PresignedDownload,
  StoredEntry,
  StoredFile,
  TempSweep,
} from './fileStore';
import { contentPath, sha256Pattern } from './fileStore';
import { sweepTempDir } from './localFileStore';

/**
 * File bytes in an S3-compatible bucket (FILE_STORE=s3), under the local store's layout:
 * `files/<aa>/<bb>/<sha256>`. Bytes stream both ways; a stream of unknown size is uploaded with
 * lib-storage's `Upload` (parts of 5 MiB, at most two in memory) to `tmp/put-<uuid>` while it is
 * hashed, then copied in the bucket under its name and the temp object deleted. A file already
 * on local disk (a received upload, a prepared or signed PDF) is uploaded under its name at once.
 *
 * Each object carries its put time (`x-amz-meta-put-at`, from the clock), refreshed by every put
 * of the same content, which the sweep compares with its grace period. Claims and locks are in
 * memory, as in the local store: they order the puts, rollbacks and sweep deletes of one
 * process. Between processes a bucket has no rename, so the sweep's check of the put time and
 * its delete are two requests (see docs/decisions.md).
 *
 * The PDF engine reads files at random offsets, so `withLocalFile` downloads a verified copy
 * into the instance's temp directory for the length of one task.
 */

const filesPrefix = 'files/';
const tempPrefix = 'tmp/';
const putAtKey = 'put-at';
const partSize = 5 * 1024 * 1024;
const keyPattern = /^files\/([0-9a-f]{2})\/([0-9a-f]{2})\/([0-9a-f]{64})$/;

export function s3Client(settings: S3Settings): S3Client {
  return new S3Client({
    region: settings.region,
    forcePathStyle: settings.forcePathStyle,
    ...(settings.endpoint !== undefined ? { endpoint: settings.endpoint } : {}),
    ...(settings.credentials !== undefined
      ? {
          credentials: {
            accessKeyId: settings.credentials.accessKeyId,
            secretAccessKey: settings.credentials.secretAccessKey(),
          },
        }
      : {}),
    // Checksums only where S3 requires them: with the newer defaults (a CRC32 trailer on every
    // streamed PutObject/UploadPart), S3-compatible services that do not know the
    // aws-chunked trailer (s3rver 3.7, older MinIO and Ceph) store the framing with the bytes.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

export class S3FileStore implements FileStore {
  readonly kind = 's3';
  readonly bucket: string;
  private readonly claims = new ContentClaims();

  private readonly presignedDownloads: boolean;

  constructor(
    readonly client: S3Client,
    settings: Pick<S3Settings, 'bucket' | 'presignedDownloads'>,
    readonly tempDir: string,
    private readonly clock: Clock,
  ) {
    this.bucket = settings.bucket;
    this.presignedDownloads = settings.presignedDownloads;
  }

  static keyOf(sha256: string): string {
    return `${filesPrefix}${contentPath(sha256)}`;
  }

  /** The object key of a stored file (`S3FileStore.keyOf`, for callers holding an instance). */
  keyOf(sha256: string): string {
    return S3FileStore.keyOf(sha256);
  }

  async init(): Promise<void> {
    await fs.mkdir(this.tempDir, { recursive: true, mode: 0o700 });
  }

  /** A small object written to the bucket and deleted (NoSuchBucket, AccessDenied, ... when not). */
  async assertWritable(): Promise<void> {
    const Key = `${tempPrefix}ready-${crypto.randomUUID()}`;
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key, Body: 'ready' }));
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key }));
  }

  async put(source: Readable | string): Promise<StoredFile> {
    if (typeof source === 'string') {
      const { sha256, size } = await hashFile(source);
      return this.place(sha256, size, () => this.upload(S3FileStore.keyOf(sha256), source, size));
    }
    const hash = crypto.createHash('sha256');
    let size = 0;
    const hashing = new Transform({
      transform(chunk: Buffer | string, _encoding, done) {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        hash.update(bytes);
        size += bytes.length;
        done(null, bytes);
      },
    });
    source.once('error', (error) => hashing.destroy(error));
    const tempKey = `${tempPrefix}put-${crypto.randomUUID()}`;
    try {
      await this.upload(tempKey, source.pipe(hashing));
      const sha256 = hash.digest('hex');
      return await this.place(sha256, size, () => this.copyInto(tempKey, sha256));
    } finally {
      await this.deleteKey(tempKey).catch(() => undefined);
    }
  }

  async putFile(tempPath: string): Promise<StoredFile> {
    try {
      return await this.put(tempPath);
    } finally {
      await fs.rm(tempPath, { force: true });
    }
  }

  async putHashed(
    tempPath: string,
    written: { sha256: string; size: number },
  ): Promise<StoredFile> {
    try {
      if (!sha256Pattern.test(written.sha256)) {
        throw new TypeError(`not a SHA-256 hex digest: ${written.sha256}`);
      }
      const { size } = await fs.stat(tempPath);
      if (size !== written.size) throw new Error(`${tempPath} is not the size it was written`);
      const key = S3FileStore.keyOf(written.sha256);
      return await this.place(written.sha256, size, () => this.upload(key, tempPath, size));
    } finally {
      await fs.rm(tempPath, { force: true });
    }
  }

  async exists(sha256: string): Promise<boolean> {
    return (await this.head(S3FileStore.keyOf(sha256))) !== null;
  }

  async open(sha256: string): Promise<OpenedFile> {
    try {
      const answer = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: S3FileStore.keyOf(sha256) }),
      );
      return { stream: answer.Body as Readable, size: answer.ContentLength ?? 0 };
    } catch (error) {
      if (!isMissing(error)) throw error;
      throw new DomainError('FILE_CONTENT_MISSING', 'The stored file content is missing');
    }
  }

  async withLocalFile<T>(sha256: string, task: (filePath: string) => Promise<T>): Promise<T> {
    await this.init();
    const copy = path.join(this.tempDir, `get-${crypto.randomUUID()}.part`);
    try {
      // A copy that does not match its name is read again a few times: another instance may be
      // writing the same content under the same key at this moment (stores that are not atomic
      // per write, s3rver among them, show the object half-written meanwhile).
      for (let attempt = 1; ; attempt++) {
        const got = await this.download(sha256, copy);
        if (got === sha256) break;
        if (attempt >= 4) {
          throw new DomainError(
            'FILE_CONTENT_MISSING',
            `The stored file ${sha256} does not match its content (SHA-256 ${got})`,
          );
        }
        await fs.rm(copy, { force: true });
        await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
      }
      return await task(copy);
    } finally {
      await fs.rm(copy, { force: true });
    }
  }

  /** Writes the stored file to `target` (a new file), answering the SHA-256 of what came. */
  private async download(sha256: string, target: string): Promise<string> {
    const opened = await this.open(sha256);
    const hash = crypto.createHash('sha256');
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    });
    await pipeline(opened.stream, hashing, createWriteStream(target, { flags: 'wx', mode: 0o600 }));
    return hash.digest('hex');
  }

  keep(file: StoredFile): void {
    this.claims.release(file.sha256);
  }

  remove(file: StoredFile): Promise<boolean> {
    return this.claims.withLock(file.sha256, async () => {
      const claim = this.claims.release(file.sha256);
      if (!file.created || claim?.shared) return false;
      await this.deleteKey(S3FileStore.keyOf(file.sha256));
      return true;
    });
  }

  async *entries(): AsyncGenerator<StoredEntry> {
    const pages = paginateListObjectsV2(
      { client: this.client },
      { Bucket: this.bucket, Prefix: filesPrefix },
    );
    for await (const page of pages) {
      for (const object of page.Contents ?? []) {
        const match = keyPattern.exec(object.Key ?? '');
        const sha256 = match?.[3];
        if (sha256 === undefined || !sha256.startsWith(`${match?.[1]}${match?.[2]}`)) continue;
        const found = await this.head(S3FileStore.keyOf(sha256));
        if (found === null) continue;
        yield { sha256, size: found.size, putAt: found.putAt, aside: false };
      }
    }
  }

  removeUnreferenced(sha256: string, putBefore: Date): Promise<number | null> {
    return this.claims.withLock(sha256, async () => {
      if (this.claims.has(sha256)) return null;
      const found = await this.head(S3FileStore.keyOf(sha256));
      if (found === null || found.putAt.getTime() >= putBefore.getTime()) return null;
      await this.deleteKey(S3FileStore.keyOf(sha256));
      return found.size;
    });
  }

  /** A bucket has nothing set aside. */
  async restoreAside(): Promise<void> {}

  async removeAside(): Promise<void> {}

  /** The local temp directory, then temp objects left by interrupted puts and probes. */
  async sweepTemp(before: Date, dryRun: boolean): Promise<TempSweep> {
    const swept = await sweepTempDir(this.tempDir, before, dryRun);
    const pages = paginateListObjectsV2(
      { client: this.client },
      { Bucket: this.bucket, Prefix: tempPrefix },
    );
    for await (const page of pages) {
      for (const object of page.Contents ?? []) {
        if (!object.Key || !object.LastModified || object.LastModified >= before) continue;
        if (!dryRun) await this.deleteKey(object.Key);
        swept.count += 1;
        swept.bytes += object.Size ?? 0;
      }
    }
    return swept;
  }

  /** Undefined unless presigned downloads were asked for (S3_PRESIGNED_DOWNLOADS). */
  async presignDownload(
    sha256: string,
    headers: PresignedDownload,
    expiresInSeconds: number,
  ): Promise<string | undefined> {
    if (!this.presignedDownloads) return undefined;
    return getSignedUrl(
      this.client,
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: S3FileStore.keyOf(sha256),
        ResponseContentType: headers.contentType,
        ResponseContentDisposition: headers.contentDisposition,
        ResponseCacheControl: 'private, no-store',
      }),
      { expiresIn: expiresInSeconds },
    );
  }

  /** The size and put time of an object; null when it is not there. */
  async head(key: string): Promise<{ size: number; putAt: Date } | null> {
    try {
      const answer = await this.client.send(
        new HeadObjectCommand({ Bucket: this.bucket, Key: key }),
      );
      const stamped = answer.Metadata?.[putAtKey];
      const putAt = stamped && !Number.isNaN(Date.parse(stamped)) ? new Date(stamped) : undefined;
      return {
        size: answer.ContentLength ?? 0,
        putAt: putAt ?? answer.LastModified ?? new Date(0),
      };
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  /** Places the content under its lock; `write` uploads or copies it under its name. */
  private place(sha256: string, size: number, write: () => Promise<void>): Promise<StoredFile> {
    return this.claims.withLock(sha256, async () => {
      const created = (await this.head(S3FileStore.keyOf(sha256))) === null;
      // Written again also when it is there: the put time moves, and a damaged copy is repaired.
      await write();
      this.claims.add(sha256, created);
      return { sha256, size, created };
    });
  }

  private async upload(key: string, body: Readable | string, size?: number): Promise<void> {
    const upload = new Upload({
      client: this.client,
      queueSize: 2,
      partSize,
      params: {
        Bucket: this.bucket,
        Key: key,
        Body: typeof body === 'string' ? createReadStream(body) : body,
        ...(size !== undefined ? { ContentLength: size } : {}),
        Metadata: { [putAtKey]: this.clock.now().toISOString() },
      },
    });
    await upload.done();
  }

  private async copyInto(tempKey: string, sha256: string): Promise<void> {
    await this.client.send(
      new CopyObjectCommand({
        Bucket: this.bucket,
        Key: S3FileStore.keyOf(sha256),
        CopySource: `${this.bucket}/${tempKey}`,
        MetadataDirective: 'REPLACE',
        Metadata: { [putAtKey]: this.clock.now().toISOString() },
      }),
    );
  }

  private async deleteKey(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }
}

function isMissing(error: unknown): boolean {
  return (
    error instanceof S3ServiceException &&
    error.name !== 'NoSuchBucket' &&
    (error.$metadata.httpStatusCode === 404 ||
      error.name === 'NoSuchKey' ||
      error.name === 'NotFound')
  );
}

async function hashFile(file: string): Promise<{ sha256: string; size: number }> {
  const hash = crypto.createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}
