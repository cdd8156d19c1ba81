import type { Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openDatabaseCopy, snapshotDatabase } from '../db/snapshot';
import { legacyCaDir } from '../dev/legacyCaFiles';
import { DomainError } from '../errors/domainError';
import type { Clock } from '../platform/clock';
import type { Config } from '../platform/config';
import { storedFiles } from '../storage/localFileStore';
import { referencedFiles } from '../storage/queries';
import {
  backupFormat,
  backupFormatVersion,
  type CopiedFile,
  copyHashed,
  databaseName,
  developmentCaFolder,
  filesFolder,
  hashFile,
  isEntryPath,
  type Manifest,
  type ManifestEntry,
  manifestName,
  otherEntries,
  secretsNote,
  stagingFor,
  storedFilePath,
} from './manifest';
import { type BackupCounts, countRows } from './queries';

/**
 * `admin backup --out DIR` while the server runs and writes. The database is a snapshot at one
 * instant T (SQLite's online backup API); the file store has no instant, so the backup makes
 * sure it holds every file the snapshot names:
 *
 * 1. Every file in the store now is copied first (its name is its SHA-256, checked on the way).
 * 2. Then the snapshot is taken.
 * 3. Then the files the snapshot names that step 1 did not find are copied, and the copies the
 *    snapshot does not name are dropped.
 *
 * Stored files are immutable and a file is written before the row that names it commits. A
 * file named at T was therefore either in the store during step 1, or put after step 1 began:
 * then its mtime is that recent, and the storage sweep (which deletes only files unreferenced
 * and older than an hour) leaves it for step 3. A file still missing then is reported (the
 * manifest's `missingFiles`, a warning), never silently skipped.
 *
 * The backup is written to a temp directory beside DIR (or inside an empty DIR) and put in
 * place at the end, its manifest last: an interrupted backup never looks like one. The master
 * secret is not copied.
 */

/** What a file of DATA_DIR that is not a regular file is refused with. */
const unreadable = 'BACKUP_FILE_UNREADABLE';

export type BackupSource = Pick<Config, 'dataDir' | 'databaseFile' | 'secretKey'> &
  Partial<Pick<Config, 'fileStore' | 'databaseUrl'>>;

export interface BackupReport {
  directory: string;
  createdAt: string;
  schemaVersion: number;
  counts: BackupCounts;
  /** Stored files in the backup, and the bytes of everything in it. */
  storedFiles: number;
  /**
   * FILE_STORE=s3: the stored files live in the bucket, which its own versioning or replication
   * backs up; this backup holds the database (and the development CA) only.
   */
  filesInBucket: boolean;
  bytes: number;
  missingFiles: string[];
  /** SHA-256 of manifest.json: noted elsewhere, it shows that the manifest is the one written. */
  manifestSha256: string;
  /** DATA_DIR/master.key when the service uses it (no SECRET_KEY): keep it apart from the backup. */
  masterKeyFile: string | null;
}

const isInside = (child: string, parent: string) => {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
};

export async function createBackup(
  source: BackupSource,
  out: string,
  clock: Clock,
): Promise<BackupReport> {
  const target = path.resolve(out);
  const dataDir = path.resolve(source.dataDir);
  if (isInside(target, dataDir) || isInside(dataDir, target)) {
    throw new DomainError(
      'BACKUP_TARGET_REFUSED',
      `${target} and DATA_DIR ${dataDir} overlap: write the backup outside the data directory`,
    );
  }
  const others = await otherEntries(target, []);
  if (others.length > 0) {
    throw new DomainError(
      'BACKUP_TARGET_REFUSED',
      `${target} is not empty (${others.slice(0, 3).join(', ')}): give a new or empty directory`,
    );
  }
  if (source.databaseUrl !== undefined) {
    // Several instances: the database is PostgreSQL's to back up, the files the bucket's.
    throw new DomainError(
      'BACKUP_SOURCE_MISSING',
      'The database is PostgreSQL (DATABASE_URL): back it up with pg_dump or continuous archiving (docs/scale-out.md); admin backup copies the single-host SQLite database',
    );
  }
  if (!(await fs.stat(source.databaseFile).catch(() => null))) {
    throw new DomainError('BACKUP_SOURCE_MISSING', `No database at ${source.databaseFile}`);
  }
  // The manifest last: a directory with one holds the whole backup.
  const staging = await stagingFor(target, manifestName);
  try {
    const report = await writeBackup(source, staging.dir, clock);
    await staging.commit();
    const masterKey = path.join(dataDir, 'master.key');
    const usesMasterKey =
      source.secretKey === undefined && (await fs.stat(masterKey).catch(() => null)) !== null;
    return { ...report, directory: target, masterKeyFile: usesMasterKey ? masterKey : null };
  } catch (error) {
    await staging.discard();
    throw error;
  }
}

async function writeBackup(source: BackupSource, staging: string, clock: Clock) {
  const createdAt = clock.now().toISOString();
  const store = path.join(source.dataDir, filesFolder);
  const stagedFile = (sha256: string) => path.join(staging, storedFilePath(sha256));
  const storePath = (sha256: string) => path.join(source.dataDir, storedFilePath(sha256));
  const copied = new Map<string, CopiedFile>();
  const filesInBucket = source.fileStore === 's3';
  /** Copies a stored file; false when it is gone or its bytes are not its name. */
  const copyStored = async (sha256: string): Promise<boolean> => {
    const copy = await copyHashed(storePath(sha256), stagedFile(sha256), unreadable);
    if (copy?.sha256 === sha256) {
      copied.set(sha256, copy);
      return true;
    }
    if (copy !== null) await fs.rm(stagedFile(sha256), { force: true });
    return false;
  };

  // 1. The store as it is.
  if (!filesInBucket) {
    for await (const file of storedFiles(store)) {
      if (!file.aside) await copyStored(file.sha256);
    }
  }
  // 2. The snapshot.
  const databaseFile = path.join(staging, databaseName);
  await snapshotDatabase(source.databaseFile, databaseFile);
  await fs.chmod(databaseFile, 0o600);
  const snapshot = openDatabaseCopy(databaseFile);
  let referenced: Set<string>;
  let counts: BackupCounts;
  let schemaVersion: number;
  try {
    // '' : the prepared file of every open preparation, expired or not, as the rows say.
    referenced = await referencedFiles(snapshot.db, '');
    counts = await countRows(snapshot.db);
    schemaVersion = snapshot.schemaVersion();
  } finally {
    await snapshot.close();
  }
  // 3. What the snapshot names and step 1 did not find; then only what it names stays.
  const missingFiles: string[] = [];
  for (const sha256 of filesInBucket ? [] : [...referenced].sort()) {
    if (!copied.has(sha256) && !(await copyStored(sha256))) missingFiles.push(sha256);
  }
  for (const sha256 of [...copied.keys()]) {
    if (referenced.has(sha256)) continue;
    await fs.rm(stagedFile(sha256), { force: true });
    copied.delete(sha256);
  }

  const entries: ManifestEntry[] = [
    { path: databaseName, ...(await hashFile(databaseFile)) },
    ...(await copyDevelopmentCa(source, staging)),
    ...[...copied.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([sha256, copy]) => ({ path: storedFilePath(sha256), ...copy })),
  ];
  const manifest: Manifest = {
    format: backupFormat,
    version: backupFormatVersion,
    createdAt,
    schemaVersion,
    counts,
    missingFiles,
    secrets: secretsNote,
    entries,
  };
  const manifestFile = path.join(staging, manifestName);
  const handle = await fs.open(manifestFile, 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(manifest, null, 2)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return {
    createdAt,
    schemaVersion,
    counts,
    storedFiles: copied.size,
    filesInBucket,
    bytes: entries.reduce((sum, entry) => sum + entry.size, 0),
    missingFiles,
    manifestSha256: (await hashFile(manifestFile)).sha256,
  };
}

/**
 * DATA_DIR/dev-ca, only while it holds a development CA not yet imported: the CA lives in the
 * database since migration 029 (the snapshot carries it), and the first start after the upgrade
 * imports the folder and renames it. A data directory backed up between the upgrade and that
 * start keeps its CA this way; the restored folder is imported by the next start. Its keys are
 * encrypted under the master secret.
 */
async function copyDevelopmentCa(source: BackupSource, staging: string): Promise<ManifestEntry[]> {
  const root = legacyCaDir(source);
  const entries: ManifestEntry[] = [];
  const visit = async (relative: string, depth: number): Promise<void> => {
    let names: Dirent[];
    try {
      names = await fs.readdir(path.join(root, relative), { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const entry of names.sort((a, b) => a.name.localeCompare(b.name))) {
      const name = path.posix.join(relative, entry.name);
      if (entry.isDirectory() && depth === 0) await visit(name, 1);
      if (!entry.isFile()) continue;
      const entryPath = path.posix.join(developmentCaFolder, name);
      if (!isEntryPath(entryPath)) continue;
      const copy = await copyHashed(
        path.join(root, name),
        path.join(staging, entryPath),
        unreadable,
      );
      if (copy !== null) entries.push({ path: entryPath, ...copy });
    }
  };
  await visit('', 0);
  return entries;
}
