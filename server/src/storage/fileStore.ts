import type { Readable } from 'node:stream';

/**
 * Where file bytes live, content-addressed by SHA-256 (`files/<aa>/<bb>/<sha256>`): a local
 * folder (localFileStore.ts, the default, also on a shared volume) or an S3-compatible bucket
 * (s3FileStore.ts, FILE_STORE=s3). Both stream in and out; neither holds a whole file in memory.
 *
 * Identical content is stored once, so two rows may name one file. A put claims its content
 * until the row naming it commits (`keep`) or fails (`remove`, which deletes only what that put
 * created and no other put touched meanwhile). Every put stamps the content's put time, also when
 * it was there already, so the sweep (storage/sweep.ts) spares content put within its grace
 * period whose row may not be committed yet.
 */

export interface StoredFile {
  sha256: string;
  size: number;
  /** False when identical content was already stored. */
  created: boolean;
}

export interface OpenedFile {
  stream: Readable;
  size: number;
}

/** A stored file as the sweep walks them. */
export interface StoredEntry {
  sha256: string;
  size: number;
  /** When it was last put. */
  putAt: Date;
  /** Set aside by a sweep of the local store (`<sha256>.sweep`); never so in a bucket. */
  aside: boolean;
}

export interface TempSweep {
  count: number;
  bytes: number;
}

/** The headers a presigned download answers with. */
export interface PresignedDownload {
  contentType: string;
  contentDisposition: string;
}

export interface FileStore {
  readonly kind: 'local' | 's3';
  /**
   * This instance's local temp directory: uploads being received, downloads to adopt with
   * putFile, prepared and signed PDFs being written, local copies for the PDF engine.
   */
  readonly tempDir: string;
  /** Creates the temp directory (and the local root); call once at start. */
  init(): Promise<void>;
  /** Proves the store takes a file now (the readiness check); throws the reason when not. */
  assertWritable(): Promise<void>;
  /** Stores a stream, or a copy of the file at a path (the source file stays). */
  put(source: Readable | string): Promise<StoredFile>;
  /** Takes over a written temp file (hashing it while reading); the temp file is gone after. */
  putFile(tempPath: string): Promise<StoredFile>;
  /** Takes over a temp file its writer hashed while writing it; the temp file is gone after. */
  putHashed(tempPath: string, written: { sha256: string; size: number }): Promise<StoredFile>;
  exists(sha256: string): Promise<boolean>;
  /** A read stream and its size; FILE_CONTENT_MISSING when the content is not there. */
  open(sha256: string): Promise<OpenedFile>;
  /**
   * Runs `task` with a local path holding the content, for the PDF engine, which reads files
   * at random offsets: the stored file itself in a local store, a verified temp copy for a
   * bucket (deleted after the task).
   */
  withLocalFile<T>(sha256: string, task: (filePath: string) => Promise<T>): Promise<T>;
  /** The commit of a put: the file is referenced now; ends this put's claim. */
  keep(file: StoredFile): void;
  /** The rollback of a put; returns whether the file was deleted. */
  remove(file: StoredFile): Promise<boolean>;
  /** Every stored file (and, in a local store, every one set aside by a sweep). */
  entries(): AsyncIterable<StoredEntry>;
  /**
   * The sweep's delete of content no row names, unless a put of it in this process is not yet
   * committed or it was put at or after `putBefore`. Returns the bytes deleted, or null.
   */
  removeUnreferenced(sha256: string, putBefore: Date): Promise<number | null>;
  /** A file set aside by a sweep goes back under its name (local store only; else nothing). */
  restoreAside(sha256: string): Promise<void>;
  /** A file set aside by a sweep is deleted if it was put before `putBefore`. */
  removeAside(sha256: string, putBefore: Date): Promise<void>;
  /** Leftover temp files (and temp objects) older than `before`; deleted unless `dryRun`. */
  sweepTemp(before: Date, dryRun: boolean): Promise<TempSweep>;
  /**
   * A short-lived URL that downloads the content straight from the store with these headers,
   * when the store makes them (a bucket with S3_PRESIGNED_DOWNLOADS=1); undefined otherwise.
   * The URL is a credential.
   */
  presignDownload?(
    sha256: string,
    headers: PresignedDownload,
    expiresInSeconds: number,
  ): Promise<string | undefined>;
}

export const sha256Pattern = /^[0-9a-f]{64}$/;

/** The content's name in the store, relative: `files/ab/cd/<sha256>` in a bucket, `ab/cd/<sha256>` under the local root. */
export function contentPath(sha256: string): string {
  if (!sha256Pattern.test(sha256)) throw new TypeError(`not a SHA-256 hex digest: ${sha256}`);
  return `${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}`;
}
