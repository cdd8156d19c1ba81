import { z } from 'zod';
import { sweepFileStore } from '../../storage/sweep';
import { type Command, command, option } from '../command';

/** Bytes for people: whole bytes below 1 KiB, else one decimal in the largest fitting unit. */
function bytesText(bytes: number): string {
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  if (bytes < 1024) return `${bytes} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** `admin storage sweep [--dry-run]`: the daily file store sweep, run now. */
export const storageCommands: Command[] = [
  command({
    name: 'storage sweep',
    options: z.object({ 'dry-run': option.flag }),
    prepare: ({ 'dry-run': dryRun }) => {
      return async (deps) => {
        const report = await sweepFileStore(deps, { dryRun });
        const verb = dryRun ? 'Would delete' : 'Deleted';
        const lines = [
          ...(dryRun
            ? report.deletedFiles.map((file) => `would delete ${file.sha256}  ${file.size}`)
            : []),
          `${verb} ${report.deleted} unreferenced files (${bytesText(report.deletedBytes)}); kept ${report.kept} (${bytesText(report.keptBytes)}), ${report.recent} of them unreferenced but put within the last hour.`,
          `${dryRun ? 'Would end' : 'Ended'} ${report.abandonedPreparations} expired signature preparations; ${dryRun ? 'would delete' : 'deleted'} ${report.tempDeleted} leftover temp files (${bytesText(report.tempDeletedBytes)}).`,
        ];
        const warnings =
          report.missing > 0
            ? [`${report.missing} files named by rows are missing from the store.`]
            : [];
        return { json: { ...report }, lines, warnings };
      };
    },
  }),
];
