import type { Db } from '../db/database';
import type { Clock } from '../platform/clock';
import type { FileStore } from './fileStore';
import {
  abandonExpiredPreparations,
  countExpiredOpenPreparations,
  referencedFiles,
} from './queries';

/**
 * The file store sweep: content-addressed files are shared and never deleted by the rows that
 * stop naming them (a replaced template, a superseded or expired preparation, a put whose row
 * never committed), so a pass deletes every stored file no row names. Files put within the grace
 * period are spared: a put happens before its row commits. An open preparation is ended
 * (abandoned) once it has been expired for the grace period too, and only then its prepared file
 * goes: a finalize that passed the expiry check just before still finds its file.
 */

export interface SweepDeps {
  db: Db;
  clock: Clock;
  files: FileStore;
}

export interface SweepOptions {
  /** Report what would be deleted; change nothing. */
  dryRun: boolean;
  /** Default one hour. */
  graceMs?: number;
}

export interface SweptFile {
  sha256: string;
  size: number;
}

export interface SweepReport {
  dryRun: boolean;
  /** Stored files left in place (referenced, or put within the grace period). */
  kept: number;
  keptBytes: number;
  /** Unreferenced files deleted (would be, in a dry run). */
  deleted: number;
  deletedBytes: number;
  /** Those files, in walk order. */
  deletedFiles: SweptFile[];
  /** Unreferenced files spared because they were put within the grace period. */
  recent: number;
  /** Files a row names that are not in the store (a fault to look into; nothing is done). */
  missing: number;
  /** Open preparations past expiry plus the grace period, marked abandoned (would be). */
  abandonedPreparations: number;
  /** Leftover temp files older than the grace period, deleted (would be). */
  tempDeleted: number;
  tempDeletedBytes: number;
}

export const sweepGraceMs = 60 * 60_000;

export async function sweepFileStore(deps: SweepDeps, options: SweepOptions): Promise<SweepReport> {
  const now = deps.clock.now();
  const cutoff = new Date(now.getTime() - (options.graceMs ?? sweepGraceMs));
  const report: SweepReport = {
    dryRun: options.dryRun,
    kept: 0,
    keptBytes: 0,
    deleted: 0,
    deletedBytes: 0,
    deletedFiles: [],
    recent: 0,
    missing: 0,
    abandonedPreparations: options.dryRun
      ? await countExpiredOpenPreparations(deps.db, cutoff.toISOString())
      : await abandonExpiredPreparations(deps.db, cutoff.toISOString()),
    tempDeleted: 0,
    tempDeletedBytes: 0,
  };
  // Read after the preparations were ended, so their prepared files count as unreferenced.
  const referenced = await referencedFiles(deps.db, cutoff.toISOString());
  const seen = new Set<string>();

  for await (const file of deps.files.entries()) {
    if (file.aside) {
      // A sweep that stopped between setting the file aside and deleting it, or one running in
      // another process: a referenced file goes back; an unreferenced one once it is old.
      if (options.dryRun) continue;
      if (referenced.has(file.sha256)) await deps.files.restoreAside(file.sha256);
      else await deps.files.removeAside(file.sha256, cutoff);
      continue;
    }
    seen.add(file.sha256);
    if (referenced.has(file.sha256)) {
      report.kept += 1;
      report.keptBytes += file.size;
      continue;
    }
    const removed =
      file.putAt.getTime() >= cutoff.getTime()
        ? null
        : options.dryRun
          ? file.size
          : await deps.files.removeUnreferenced(file.sha256, cutoff);
    if (removed === null) {
      report.recent += 1;
      report.kept += 1;
      report.keptBytes += file.size;
    } else {
      report.deleted += 1;
      report.deletedBytes += removed;
      report.deletedFiles.push({ sha256: file.sha256, size: removed });
    }
  }
  for (const sha256 of referenced) if (!seen.has(sha256)) report.missing += 1;

  const temp = await deps.files.sweepTemp(cutoff, options.dryRun);
  report.tempDeleted = temp.count;
  report.tempDeletedBytes = temp.bytes;
  return report;
}
