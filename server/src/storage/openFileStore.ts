import path from 'node:path';
import { ConfigError } from '../errors/configError';
import type { Clock } from '../platform/clock';
import type { Config, S3Settings } from '../platform/config';
import type { FileStore } from './fileStore';
import { LocalFileStore } from './localFileStore';
import type { S3FileStore } from './s3FileStore';

/** DATA_DIR/files: the local store's root, and the temp directory of either store under it. */
export function localStoreRoot(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'files');
}

/** The file store FILE_STORE names: the local folder (the default) or the S3 bucket. */
export function openFileStore(
  config: Pick<Config, 'dataDir' | 'fileStore' | 's3'>,
  clock: Clock,
): FileStore {
  const local = new LocalFileStore(localStoreRoot(config), clock);
  if (config.fileStore === 'local') return local;
  return openS3FileStore(config, clock, local.tempDir);
}

/** The bucket of the S3_* settings, with its temp files in `tempDir` (DATA_DIR/files/tmp). */
export function openS3FileStore(
  config: Pick<Config, 'dataDir' | 's3'>,
  clock: Clock,
  tempDir = new LocalFileStore(localStoreRoot(config)).tempDir,
): S3FileStore {
  const settings: S3Settings | undefined = config.s3;
  if (settings === undefined) throw new ConfigError('S3_BUCKET is required for the S3 file store');
  // Loaded only here: the AWS SDK costs a single-host start ~75 ms and ~23 MB it never uses.
  const { S3FileStore: Store, s3Client } =
    require('./s3FileStore') as typeof import('./s3FileStore');
  return new Store(s3Client(settings), settings, tempDir, clock);
}
