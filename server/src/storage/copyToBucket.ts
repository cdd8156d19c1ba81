import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import { type LocalFileStore, storedFiles } from './localFileStore';
import type { S3FileStore } from './s3FileStore';

/**
 * `admin storage copy --to s3`: every file of the local store into the bucket, under the same
 * content-addressed name. A file already there with the same size is not uploaded again; every
 * file, copied or found, is then read back from the bucket and its SHA-256 compared with its
 * name (a found copy that fails is uploaded again and read once more). So the command may be
 * stopped and run again at any point, and a run that reports no failure left a bucket holding
 * every local file, byte for byte. The local files stay.
 */

export interface CopyReport {
  /** Local files (sets aside by a sweep not counted). */
  files: number;
  copied: number;
  copiedBytes: number;
  /** Already in the bucket with the same size, and verified. */
  present: number;
  /** Local files whose bytes are not their name (damaged on disk): not copied. */
  damaged: string[];
  /** Files the bucket did not hold intact after the copy. */
  failed: string[];
}

export async function copyToBucket(
  source: LocalFileStore,
  target: S3FileStore,
  onFile?: (sha256: string, outcome: 'copied' | 'present' | 'damaged' | 'failed') => void,
): Promise<CopyReport> {
  const report: CopyReport = {
    files: 0,
    copied: 0,
    copiedBytes: 0,
    present: 0,
    damaged: [],
    failed: [],
  };
  for await (const file of storedFiles(source.root)) {
    if (file.aside) continue;
    report.files += 1;
    const outcome = await copyOne(source, target, file.sha256, report);
    onFile?.(file.sha256, outcome);
  }
  return report;
}

async function copyOne(
  source: LocalFileStore,
  target: S3FileStore,
  sha256: string,
  report: CopyReport,
): Promise<'copied' | 'present' | 'damaged' | 'failed'> {
  const local = await fs.stat(source.pathOf(sha256));
  const found = await target.head(target.keyOf(sha256));
  if (found?.size === local.size && (await bucketHolds(target, sha256))) {
    report.present += 1;
    return 'present';
  }
  const stored = await target.put(source.pathOf(sha256));
  target.keep(stored);
  if (stored.sha256 !== sha256) {
    // The local bytes are not their name: what was uploaded is named by its own digest, which
    // no row names (the sweep takes it); the damaged file is reported.
    report.damaged.push(sha256);
    return 'damaged';
  }
  if (!(await bucketHolds(target, sha256))) {
    report.failed.push(sha256);
    return 'failed';
  }
  report.copied += 1;
  report.copiedBytes += stored.size;
  return 'copied';
}

/** The bucket's object under `sha256` read back whole: its bytes hash to its name. */
async function bucketHolds(target: S3FileStore, sha256: string): Promise<boolean> {
  try {
    const opened = await target.open(sha256);
    const hash = crypto.createHash('sha256');
    for await (const chunk of opened.stream) hash.update(chunk as Buffer);
    return hash.digest('hex') === sha256;
  } catch {
    return false;
  }
}
