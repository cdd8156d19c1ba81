import crypto from 'node:crypto';
import { constants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { DomainError } from '../errors/domainError';
import { syncDirectory } from '../storage/localFileStore';

/**
 * A backup directory: `manifest.json`, the database snapshot `esign.sqlite`, the stored files
 * its rows name under `files/<aa>/<bb>/<sha256>`, and a development CA not yet imported into the
 * database under `dev-ca/` (backups of versions before migration 029 carry it; the next start
 * imports it): the layout of DATA_DIR itself, so that a restore is a verified copy. The
 * manifest lists every other file with its size and SHA-256; a restore copies exactly those
 * and refuses the backup when one differs.
 */

export const manifestName = 'manifest.json';
export const databaseName = 'esign.sqlite';
export const filesFolder = 'files';
export const developmentCaFolder = 'dev-ca';

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'must be a SHA-256 hex digest');

/** The paths a manifest may name: nothing absolute, no `..`, nothing outside the layout. */
const entryPath = z
  .string()
  .regex(
    /^(esign\.sqlite|files\/[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}|dev-ca\/[A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9_-][A-Za-z0-9._-]*)?)$/,
    'is not a path of the backup layout',
  );

export const isEntryPath = (value: string) => entryPath.safeParse(value).success;

const ManifestEntrySchema = z
  .object({ path: entryPath, size: z.number().int().nonnegative(), sha256: sha256Hex })
  .refine(
    (entry) => !entry.path.startsWith(`${filesFolder}/`) || entry.path.endsWith(entry.sha256),
    {
      message: 'a stored file must be named by its SHA-256',
    },
  );

export type ManifestEntry = z.infer<typeof ManifestEntrySchema>;

export const backupFormat = 'esign-backup';
export const backupFormatVersion = 1;

export const ManifestSchema = z.object({
  format: z.literal(backupFormat),
  version: z.literal(backupFormatVersion),
  createdAt: z.string(),
  /** The database's newest migration: a build that knows fewer cannot run it. */
  schemaVersion: z.number().int().nonnegative(),
  /** Rows per table (server/src/backup/queries.ts), for people. */
  counts: z.record(z.string(), z.number().int().nonnegative()),
  /** Stored files rows name that were not in the store when the backup was taken. */
  missingFiles: z.array(sha256Hex),
  /** What the backup does not hold: the master secret. */
  secrets: z.string(),
  entries: z.array(ManifestEntrySchema),
});

export type Manifest = z.infer<typeof ManifestSchema>;

export const secretsNote =
  'Not included: SECRET_KEY (or DATA_DIR/master.key). Webhook secrets, software signing keys and the development CA are encrypted under it; a restored service needs the same one.';

/** The path of a stored file inside a backup or a DATA_DIR. */
export function storedFilePath(sha256: string): string {
  return path.posix.join(filesFolder, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
}

export interface CopiedFile {
  size: number;
  sha256: string;
}

/**
 * Copies a regular file (never through a symbolic link) to `target`, which must not exist,
 * hashing the bytes as they pass; the copy is fsynced. Answers null when the source is gone;
 * anything but a regular file is refused with `refusal` (the caller's error code).
 */
export async function copyHashed(
  source: string,
  target: string,
  refusal: string,
): Promise<CopiedFile | null> {
  let input: fs.FileHandle;
  try {
    input = await fs.open(source, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') {
      throw new DomainError(refusal, `${source} is a symbolic link`);
    }
    throw error;
  }
  try {
    if (!(await input.stat()).isFile()) {
      throw new DomainError(refusal, `${source} is not a regular file`);
    }
    await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    const output = await fs.open(target, 'wx', 0o600);
    const hash = crypto.createHash('sha256');
    let size = 0;
    try {
      for await (const chunk of input.createReadStream({ autoClose: false })) {
        const bytes = chunk as Buffer;
        hash.update(bytes);
        size += bytes.length;
        await output.write(bytes);
      }
      await output.sync();
    } finally {
      await output.close();
    }
    return { size, sha256: hash.digest('hex') };
  } finally {
    await input.close();
  }
}

/** SHA-256 and size of a file, read once. */
export async function hashFile(file: string): Promise<CopiedFile> {
  const handle = await fs.open(file, 'r');
  try {
    const hash = crypto.createHash('sha256');
    let size = 0;
    for await (const chunk of handle.createReadStream({ autoClose: false })) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    return { size, sha256: hash.digest('hex') };
  } finally {
    await handle.close();
  }
}

/** Every directory under `root` (itself included), deepest first: what to fsync after a copy. */
export async function directoriesUnder(root: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (dir: string) => {
    for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) await visit(path.join(dir, entry.name));
    }
    found.push(dir);
  };
  await visit(root);
  return found;
}

/** The names in `dir` besides `allowed` (none when it does not exist; itself when a file). */
export async function otherEntries(dir: string, allowed: string[]): Promise<string[]> {
  try {
    return (await fs.readdir(dir)).filter((name) => !allowed.includes(name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return [path.basename(dir)];
    throw error;
  }
}

/**
 * Where a backup or a restore is written before it is put in place, on the target's file system:
 * beside the target when it does not exist yet, inside it when it does (an empty directory may
 * be a mount point, a container volume, which cannot be replaced by a rename).
 */
export interface Staging {
  dir: string;
  /**
   * Puts everything in place: the staging directory is renamed to the target in one step, or,
   * for a target that exists, each of its entries is renamed into it, `last` the last one (a
   * crash in between leaves a target without it, which a restore then refuses as not empty).
   */
  commit(): Promise<void>;
  /** Removes the staging directory and what it holds. */
  discard(): Promise<void>;
}

export async function stagingFor(target: string, last: string): Promise<Staging> {
  const exists = (await fs.stat(target).catch(() => null))?.isDirectory() === true;
  const parent = exists ? target : path.dirname(target);
  await fs.mkdir(parent, { recursive: true });
  const dir = await fs.mkdtemp(
    path.join(parent, exists ? '.staging-' : `.${path.basename(target)}.staging-`),
  );
  await fs.chmod(dir, 0o700);
  return {
    dir,
    commit: async () => {
      for (const sub of await directoriesUnder(dir)) await syncDirectory(sub);
      if (!exists) {
        await fs.rename(dir, target);
      } else {
        const names = (await fs.readdir(dir)).sort(
          (a, b) => Number(a === last) - Number(b === last),
        );
        for (const name of names) await fs.rename(path.join(dir, name), path.join(target, name));
        await fs.rmdir(dir);
      }
      await syncDirectory(exists ? target : parent);
    },
    discard: () => fs.rm(dir, { recursive: true, force: true }),
  };
}
