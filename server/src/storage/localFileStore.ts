import crypto from 'node:crypto';
import { createReadStream, type Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { DomainError } from '../errors/domainError';
import { type Clock, systemClock } from '../platform/clock';
import { ContentClaims } from './claims';
import {
  contentPath,
  type FileStore,
  type OpenedFile,
  type StoredEntry,
  type StoredFile,
  sha256Pattern,
  type TempSweep,
} from './fileStore';

/**
 * File bytes on disk, content-addressed: `<root>/<aa>/<bb>/<sha256>`. A file is written to a
 * temp file on the same filesystem while it is hashed, fsynced, renamed into place and its
 * directory fsynced, so a file under its name is always complete. Nothing is held in memory.
 *
 * Identical content is stored once, so two dossiers may share a file. `remove` (the rollback of
 * a failed creation) therefore deletes only what its own `put` created and no other `put` of
 * the same content touched in the meantime; `keep` ends the claim of a `put` whose row was
 * committed. Claims are in memory: one server process writes the store.
 *
 * Every put stamps the file's mtime with the clock, also when the content was already there, so
 * the sweep (storage/sweep.ts) spares content put within its grace period whose row may not be
 * committed yet. The sweep deletes through `removeUnreferenced`: under the same per-content lock
 * as a put in this process, and, against a put in another process, by renaming the file aside
 * and checking its mtime again before deleting (a put that finds the file gone writes its own).
 */

export class LocalFileStore implements FileStore {
  readonly kind = 'local';
  readonly root: string;
  /** Temp files (also for downloads to be adopted with putFile) live here, on the same filesystem. */
  readonly tempDir: string;
  private readonly claims = new ContentClaims();

  constructor(
    root: string,
    private readonly clock: Clock = systemClock,
  ) {
    this.root = path.resolve(root);
    this.tempDir = path.join(this.root, 'tmp');
  }

  /** Creates the root and temp directories; call once at start. */
  async init(): Promise<void> {
    await fs.mkdir(this.tempDir, { recursive: true, mode: 0o700 });
  }

  /**
   * Proves the store takes files, as a put does: a small temp file written, fsynced and
   * removed. Throws the file system's error (ENOSPC, EROFS, ENOTDIR, ...) when it cannot.
   */
  async assertWritable(): Promise<void> {
    const probe = path.join(this.tempDir, `ready-${crypto.randomUUID()}.part`);
    const handle = await fs.open(probe, 'wx', 0o600);
    try {
      await handle.writeFile('ready');
      await handle.sync();
    } finally {
      await handle.close();
      await fs.rm(probe, { force: true });
    }
  }

  pathOf(sha256: string): string {
    return path.join(this.root, contentPath(sha256));
  }

  /** The stored file itself: the engine reads it in place. */
  withLocalFile<T>(sha256: string, task: (filePath: string) => Promise<T>): Promise<T> {
    return task(this.pathOf(sha256));
  }

  /** Stores a stream, or a copy of the file at a path (the source file stays). */
  async put(source: Readable | string): Promise<StoredFile> {
    await this.init();
    const input = typeof source === 'string' ? createReadStream(source) : source;
    const tempPath = this.newTempPath();
    const file = await fs.open(tempPath, 'wx', 0o600);
    const hash = crypto.createHash('sha256');
    let size = 0;
    try {
      for await (const chunk of input as AsyncIterable<Buffer | string>) {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        hash.update(bytes);
        size += bytes.length;
        await file.write(bytes);
      }
      await file.sync();
      await file.close();
    } catch (error) {
      await file.close().catch(() => undefined);
      await fs.rm(tempPath, { force: true });
      throw error;
    }
    return this.adopt(tempPath, hash.digest('hex'), size);
  }

  /**
   * Takes over an already written temp file (a download): hashes it while reading, fsyncs it and
   * renames it into place. The temp file is gone afterwards, whatever happens.
   */
  async putFile(tempPath: string): Promise<StoredFile> {
    await this.init();
    const hash = crypto.createHash('sha256');
    let size = 0;
    try {
      const file = await fs.open(tempPath, 'r+');
      try {
        for await (const chunk of file.createReadStream({ autoClose: false })) {
          hash.update(chunk as Buffer);
          size += (chunk as Buffer).length;
        }
        await file.sync();
      } finally {
        await file.close();
      }
      return await this.adopt(tempPath, hash.digest('hex'), size);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') {
        await fs.rm(tempPath, { force: true });
        throw error;
      }
    }
    // Another filesystem: copy, then drop the original.
    try {
      return await this.put(tempPath);
    } finally {
      await fs.rm(tempPath, { force: true });
    }
  }

  /**
   * Takes over a temp file its writer hashed while writing it (a prepared or signed PDF, where
   * one read feeds the copy and its hashes): fsyncs it and renames it into place without reading
   * it again. The temp file is gone afterwards, whatever happens.
   */
  async putHashed(
    tempPath: string,
    written: { sha256: string; size: number },
  ): Promise<StoredFile> {
    try {
      if (!sha256Pattern.test(written.sha256)) {
        throw new TypeError(`not a SHA-256 hex digest: ${written.sha256}`);
      }
      const file = await fs.open(tempPath, 'r+');
      try {
        const { size } = await file.stat();
        if (size !== written.size) throw new Error(`${tempPath} is not the size it was written`);
        await file.sync();
      } finally {
        await file.close();
      }
      return await this.adopt(tempPath, written.sha256, written.size);
    } catch (error) {
      await fs.rm(tempPath, { force: true });
      throw error;
    }
  }

  async exists(sha256: string): Promise<boolean> {
    try {
      return (await fs.stat(this.pathOf(sha256))).isFile();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
  }

  /** A read stream and the size of the same file (stable even if it is removed meanwhile). */
  async open(sha256: string): Promise<OpenedFile> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.pathOf(sha256), 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      throw new DomainError('FILE_CONTENT_MISSING', 'The stored file content is missing');
    }
    try {
      const { size } = await handle.stat();
      return { stream: handle.createReadStream(), size };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** The commit of a put: the file is referenced now; ends this put's claim. */
  keep(file: StoredFile): void {
    this.claims.release(file.sha256);
  }

  /**
   * The rollback of a put: deletes the file if this put created it and no other put of the
   * same content happened while it was claimed. Returns whether the file was deleted.
   */
  async remove(file: StoredFile): Promise<boolean> {
    return this.claims.withLock(file.sha256, async () => {
      const claim = this.claims.release(file.sha256);
      if (!file.created || claim?.shared) return false;
      await fs.rm(this.pathOf(file.sha256), { force: true });
      await syncDirectory(path.dirname(this.pathOf(file.sha256)));
      return true;
    });
  }

  private newTempPath(): string {
    return path.join(this.tempDir, `put-${crypto.randomUUID()}.part`);
  }

  /** Renames a complete, fsynced temp file into place (or drops it when the content is there). */
  private adopt(tempPath: string, sha256: string, size: number): Promise<StoredFile> {
    const finalPath = this.pathOf(sha256);
    return this.claims.withLock(sha256, async () => {
      const now = this.clock.now();
      const existing = await fs.stat(finalPath).catch(() => null);
      // Same name, same size: the content is there already. A different size can only be a
      // damaged copy, which the new bytes repair (it still counts as shared, not created).
      const created = existing === null;
      // The existing file is kept only if it is still there when its mtime is refreshed: a sweep
      // in another process may have taken it since the stat.
      const reused = existing?.size === size && (await touch(finalPath, now));
      if (reused) {
        await fs.rm(tempPath, { force: true });
      } else {
        await fs.utimes(tempPath, now, now);
        const first = await fs.mkdir(path.dirname(finalPath), { recursive: true, mode: 0o700 });
        await fs.rename(tempPath, finalPath);
        await syncDirectory(path.dirname(finalPath));
        if (first !== undefined) {
          await syncDirectory(path.dirname(path.dirname(finalPath)));
          await syncDirectory(this.root);
        }
      }
      this.claims.add(sha256, created);
      return { sha256, size, created };
    });
  }

  /**
   * The sweep's delete of content no row references: under the content's lock, unless a put of
   * it in this process is not yet committed or the file was put at or after `putBefore`. The file
   * is renamed aside first and its mtime read again there, so a put in another process that
   * refreshed it in the meantime keeps it (and one that comes later finds it gone and writes its
   * own). Returns the bytes deleted, or null when the file stays (or was not there).
   */
  async removeUnreferenced(sha256: string, putBefore: Date): Promise<number | null> {
    const finalPath = this.pathOf(sha256);
    return this.claims.withLock(sha256, async () => {
      if (this.claims.has(sha256)) return null;
      const found = await fs.stat(finalPath).catch(ignoreMissing);
      if (found === null || found.mtimeMs >= putBefore.getTime()) return null;
      const aside = asidePathOf(finalPath);
      try {
        await fs.rename(finalPath, aside);
      } catch (error) {
        return ignoreMissing(error);
      }
      const moved = await fs.stat(aside);
      if (moved.mtimeMs >= putBefore.getTime()) {
        await this.restoreAside(sha256);
        return null;
      }
      await fs.rm(aside, { force: true });
      await syncDirectory(path.dirname(finalPath));
      return moved.size;
    });
  }

  async *entries(): AsyncGenerator<StoredEntry> {
    for await (const file of storedFiles(this.root)) {
      const stat = await fs.stat(file.path).catch(ignoreMissing);
      if (stat === null) continue;
      yield { sha256: file.sha256, size: stat.size, putAt: stat.mtime, aside: file.aside };
    }
  }

  async removeAside(sha256: string, putBefore: Date): Promise<void> {
    const aside = asidePathOf(this.pathOf(sha256));
    const stat = await fs.stat(aside).catch(ignoreMissing);
    if (stat !== null && stat.mtimeMs < putBefore.getTime()) await fs.rm(aside, { force: true });
  }

  /** Temp files (interrupted puts, downloads, audit PDFs) older than `before`: nothing lasts that long. */
  async sweepTemp(before: Date, dryRun: boolean): Promise<TempSweep> {
    return sweepTempDir(this.tempDir, before, dryRun);
  }

  /**
   * Puts a file the sweep set aside back under its name (a crash between the rename and the
   * delete leaves one); when the name is taken again the copy aside is dropped.
   */
  async restoreAside(sha256: string): Promise<void> {
    const finalPath = this.pathOf(sha256);
    const aside = asidePathOf(finalPath);
    try {
      await fs.link(aside, finalPath);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EEXIST') throw error;
    }
    await fs.rm(aside, { force: true });
    await syncDirectory(path.dirname(finalPath));
  }
}

/** Where the sweep moves a file before deleting it: beside it, on the same filesystem. */
export const asideSuffix = '.sweep';

function asidePathOf(finalPath: string): string {
  return `${finalPath}${asideSuffix}`;
}

function ignoreMissing(error: unknown): null {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
  throw error;
}

/** Sets a file's times; false when it is gone. */
async function touch(file: string, at: Date): Promise<boolean> {
  try {
    await fs.utimes(file, at, at);
    return true;
  } catch (error) {
    return ignoreMissing(error) ?? false;
  }
}

/** fsyncs a directory, so that the names in it survive a crash. */
export async function syncDirectory(directory: string): Promise<void> {
  const handle = await fs.open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export interface FoundFile {
  sha256: string;
  path: string;
  /** Set aside by a sweep (`<sha256>.sweep`). */
  aside: boolean;
}

const twoHex = /^[0-9a-f]{2}$/;

/** The store's files, `<aa>/<bb>/<sha256>`, one directory at a time; anything else is skipped. */
export async function* storedFiles(root: string): AsyncGenerator<FoundFile> {
  for (const first of await subdirectories(root)) {
    for (const second of await subdirectories(path.join(root, first))) {
      const dir = path.join(root, first, second);
      const prefix = `${first}${second}`;
      for (const entry of await entries(dir)) {
        if (!entry.isFile()) continue;
        const aside = entry.name.endsWith(asideSuffix);
        const sha256 = aside ? entry.name.slice(0, -asideSuffix.length) : entry.name;
        if (!sha256Pattern.test(sha256) || !sha256.startsWith(prefix)) continue;
        yield { sha256, path: path.join(dir, entry.name), aside };
      }
    }
  }
}

async function subdirectories(dir: string): Promise<string[]> {
  return (await entries(dir))
    .filter((entry) => entry.isDirectory() && twoHex.test(entry.name))
    .map((entry) => entry.name);
}

async function entries(dir: string): Promise<Dirent[]> {
  try {
    return await fs.readdir(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** Deletes (unless `dryRun`) the files in a temp directory older than `before`. */
export async function sweepTempDir(
  tempDir: string,
  before: Date,
  dryRun: boolean,
): Promise<TempSweep> {
  const swept: TempSweep = { count: 0, bytes: 0 };
  for (const entry of await entries(tempDir)) {
    if (!entry.isFile()) continue;
    const file = path.join(tempDir, entry.name);
    const stat = await fs.stat(file).catch(() => null);
    if (stat === null || stat.mtimeMs >= before.getTime()) continue;
    if (!dryRun) await fs.rm(file, { force: true });
    swept.count += 1;
    swept.bytes += stat.size;
  }
  return swept;
}

/** The store as the local folder it is (tests, benchmarks and tools reading files in place). */
export function localStoreOf(store: FileStore): LocalFileStore {
  if (!(store instanceof LocalFileStore)) throw new TypeError('not the local file store');
  return store;
}
