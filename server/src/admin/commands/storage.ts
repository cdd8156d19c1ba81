import { z } from 'zod';
import { sweepFileStore } from '../../storage/sweep';
import { bytesText, type Command, command, option } from '../command';

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
