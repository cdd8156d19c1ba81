import fs from 'node:fs/promises';
import path from 'node:path';
import { firstIssue, plainIssues } from '@esign/shared';
import { newestSchemaVersion, openDatabaseCopy } from '../db/snapshot';
import { DomainError } from '../errors/domainError';
import type { Config } from '../platform/config';
import { referencedFiles } from '../storage/queries';
import {
  copyHashed,
  databaseName,
  filesFolder,
  type Manifest,
  ManifestSchema,
  manifestName,
  otherEntries,
  stagingFor,
  storedFilePath,
} from './manifest';

/**
 * `admin restore --from DIR` into the configured DATA_DIR, which must be new or empty (it may
 * hold the `master.key` the operator kept): a running service's directory is never touched.
 * Every file the manifest lists is copied into a temp directory (beside DATA_DIR, or inside it
 * when it exists: it may be a mounted volume) while its SHA-256 is computed; one that differs
 * from the manifest, or is missing, refuses the whole backup. The copied database must pass
 * SQLite's integrity check and hold no file name the backup lacks. Only then is it put in
 * place: renamed to DATA_DIR in one step, or its entries renamed into the existing directory,
 * the database last.
 */

export type RestoreTarget = Pick<Config, 'dataDir' | 'secretKey'>;

export interface RestoreReport {
  dataDir: string;
  /** When the backup was taken. */
  createdAt: string;
  schemaVersion: number;
  counts: Manifest['counts'];
  storedFiles: number;
  bytes: number;
  missingFiles: string[];
  /** Where the master secret will come from: SECRET_KEY, a kept master.key, or nowhere yet. */
  masterSecret: 'SECRET_KEY' | 'master.key' | 'none';
}

const masterKeyName = 'master.key';

const damaged = (message: string) => new DomainError('RESTORE_BACKUP_DAMAGED', message);

/** The backup's manifest, checked against its schema. */
export async function readManifest(from: string): Promise<Manifest> {
  const file = path.join(from, manifestName);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    throw new DomainError(
      'RESTORE_MANIFEST_INVALID',
      `${from} is not a backup: no ${manifestName}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new DomainError(
      'RESTORE_MANIFEST_INVALID',
      `${file} is not JSON: ${(error as Error).message}`,
    );
  }
  const parsed = ManifestSchema.safeParse(json, { error: plainIssues });
  if (!parsed.success) {
    throw new DomainError(
      'RESTORE_MANIFEST_INVALID',
      `${file} is not a backup manifest of this service: ${firstIssue(parsed.error)}`,
    );
  }
  const paths = new Set<string>();
  for (const entry of parsed.data.entries) {
    if (paths.has(entry.path)) {
      throw new DomainError('RESTORE_MANIFEST_INVALID', `${file} lists ${entry.path} twice`);
    }
    paths.add(entry.path);
  }
  if (!paths.has(databaseName)) {
    throw new DomainError('RESTORE_MANIFEST_INVALID', `${file} lists no ${databaseName}`);
  }
  return parsed.data;
}

export async function restoreBackup(target: RestoreTarget, from: string): Promise<RestoreReport> {
  const source = path.resolve(from);
  const dataDir = path.resolve(target.dataDir);
  const manifest = await readManifest(source);
  const others = await otherEntries(dataDir, [masterKeyName]);
  if (others.length > 0) {
    throw new DomainError(
      'RESTORE_TARGET_NOT_EMPTY',
      `DATA_DIR ${dataDir} is not empty (it holds ${others.slice(0, 3).join(', ')}): a restore goes into a new or empty directory only; stop the server and move the directory aside first`,
    );
  }
  if (manifest.schemaVersion > newestSchemaVersion) {
    throw new DomainError(
      'RESTORE_SCHEMA_NEWER',
      `The backup's database is at schema ${manifest.schemaVersion}, newer than this build knows (${newestSchemaVersion}): restore with the build that took it or a later one`,
    );
  }
  // The database last: a DATA_DIR without one is not a service's yet.
  const staging = await stagingFor(dataDir, databaseName);
  try {
    await copyVerified(manifest, source, staging.dir);
    await checkDatabase(manifest, staging.dir);
    await fs.mkdir(path.join(staging.dir, filesFolder, 'tmp'), { recursive: true, mode: 0o700 });
    // Once more, just before: a server started on DATA_DIR meanwhile is not overwritten.
    const since = await otherEntries(dataDir, [masterKeyName, path.basename(staging.dir)]);
    if (since.length > 0) {
      throw new DomainError(
        'RESTORE_TARGET_NOT_EMPTY',
        `DATA_DIR ${dataDir} was written to during the restore (${since.slice(0, 3).join(', ')}): nothing was restored`,
      );
    }
    await staging.commit();
  } catch (error) {
    await staging.discard();
    throw error;
  }
  const keptKey = await fs.stat(path.join(dataDir, masterKeyName)).catch(() => null);
  return {
    dataDir,
    createdAt: manifest.createdAt,
    schemaVersion: manifest.schemaVersion,
    counts: manifest.counts,
    storedFiles: manifest.entries.filter((entry) => entry.path.startsWith(`${filesFolder}/`))
      .length,
    bytes: manifest.entries.reduce((sum, entry) => sum + entry.size, 0),
    missingFiles: manifest.missingFiles,
    masterSecret: target.secretKey !== undefined ? 'SECRET_KEY' : keptKey ? 'master.key' : 'none',
  };
}

/** Copies every listed file into `staging`, each checked against its size and SHA-256. */
async function copyVerified(manifest: Manifest, source: string, staging: string): Promise<void> {
  for (const entry of manifest.entries) {
    const copy = await copyHashed(
      path.join(source, entry.path),
      path.join(staging, entry.path),
      'RESTORE_BACKUP_DAMAGED',
    );
    if (copy === null) throw damaged(`${entry.path} is missing from the backup`);
    if (copy.size !== entry.size || copy.sha256 !== entry.sha256) {
      throw damaged(
        `${entry.path} is not the file the manifest lists (SHA-256 ${copy.sha256}, ${copy.size} bytes; listed ${entry.sha256}, ${entry.size} bytes)`,
      );
    }
  }
}

/** The copied database is sound and every stored file it names was restored too. */
async function checkDatabase(manifest: Manifest, staging: string): Promise<void> {
  const copy = openDatabaseCopy(path.join(staging, databaseName));
  try {
    const problems = copy.integrityProblems();
    if (problems.length > 0) {
      throw damaged(
        `${databaseName} fails SQLite's integrity check: ${problems.slice(0, 3).join('; ')}`,
      );
    }
    const listed = new Set(manifest.entries.map((entry) => entry.path));
    const known = new Set(manifest.missingFiles);
    for (const sha256 of await referencedFiles(copy.db, '')) {
      if (!listed.has(storedFilePath(sha256)) && !known.has(sha256)) {
        throw damaged(
          `${databaseName} names the stored file ${sha256}, which the backup does not hold`,
        );
      }
    }
  } finally {
    await copy.close();
  }
}
