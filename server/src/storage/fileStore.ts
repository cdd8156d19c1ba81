import crypto from 'node:crypto';
import { createReadStream, type ReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { DomainError } from '../errors/domainError';
import { type Clock, systemClock } from '../platform/clock';

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

export interface StoredFile {
  sha256: string;
  size: number;
  /** False when identical content was already stored. */
  created: boolean;
}

export interface OpenedFile {
  stream: ReadStream;
  size: number;
}

const sha256Pattern = /^[0-9a-f]{64}$/;

interface Claim {
  count: number;
  /** Another put of the same content happened while the claim was open. */
  shared: boolean;
}

export class FileStore {
  readonly root: string;
  /** Temp files (also for downloads to be adopted with putFile) live here, on the same filesystem. */
  readonly tempDir: string;
  private readonly claims = new Map<string, Claim>();
  private readonly locks = new Map<string, Promise<unknown>>();

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
    if (!sha256Pattern.test(sha256)) throw new TypeError(`not a SHA-256 hex digest: ${sha256}`);
    return path.join(this.root, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
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
    this.release(file.sha256);
  }

  /**
   * The rollback of a put: deletes the file if this put created it and no other put of the
   * same content happened while it was claimed. Returns whether the file was deleted.
   */
  async remove(file: StoredFile): Promise<boolean> {
    return this.withLock(file.sha256, async () => {
      const claim = this.release(file.sha256);
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
    return this.withLock(sha256, async () => {
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
      const claim = this.claims.get(sha256);
      if (claim === undefined) this.claims.set(sha256, { count: 1, shared: !created });
      else {
        claim.count += 1;
        claim.shared = true;
      }
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
    return this.withLock(sha256, async () => {
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

  /** Ends one claim; returns it as it was before. */
  private release(sha256: string): Claim | undefined {
    const claim = this.claims.get(sha256);
    if (claim === undefined) return undefined;
    const before = { ...claim };
    claim.count -= 1;
    if (claim.count <= 0) this.claims.delete(sha256);
    return before;
  }

  /** Runs `task` after every earlier task on the same content (rename vs. rollback). */
  private withLock<T>(sha256: string, task: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(sha256) ?? Promise.resolve();
    const run = previous.then(task, task);
    const tail = run.catch(() => undefined);
    this.locks.set(sha256, tail);
    void tail.then(() => {
      if (this.locks.get(sha256) === tail) this.locks.delete(sha256);
    });
    return run;
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
