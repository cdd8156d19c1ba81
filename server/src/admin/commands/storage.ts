import { CodedError } from '@esign/shared';
import { z } from 'zod';
import { systemClock } from '../../platform/clock';
import { copyToBucket } from '../../storage/copyToBucket';
import { LocalFileStore } from '../../storage/localFileStore';
import { localStoreRoot, openS3FileStore } from '../../storage/openFileStore';
import { sweepFileStore } from '../../storage/sweep';
import { bytesText, type Command, command, option } from '../command';

/**
 * `admin storage sweep [--dry-run]`: the daily file store sweep, run now.
 * `admin storage copy --to s3`: the local store's files into the S3_* bucket (storage/copyToBucket.ts).
 */
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
  command({
    name: 'storage copy',
    options: z.object({ to: option.oneOf(['s3'] as const) }),
    prepare: () => ({
      // Without the runtime: the database is not needed, and FILE_STORE may already say s3.
      offline: async ({ config }) => {
        const source = new LocalFileStore(localStoreRoot(config));
        const target = openS3FileStore(config, systemClock);
        try {
          const report = await copyToBucket(source, target);
          const summary = `${report.files} local files: ${report.copied} copied to bucket ${target.bucket} (${bytesText(report.copiedBytes)}), ${report.present} already there; every one read back and its SHA-256 checked.`;
          if (report.failed.length > 0 || report.damaged.length > 0) {
            throw new CodedError(
              'STORAGE_COPY_INCOMPLETE',
              `${summary} Not in the bucket intact: ${[...report.failed, ...report.damaged].slice(0, 5).join(', ')} (${report.failed.length} failed, ${report.damaged.length} damaged on local disk). Run the command again; damaged local files need a restore from backup.`,
            );
          }
          return {
            json: { ...report, bucket: target.bucket },
            lines: [summary, 'Set FILE_STORE=s3 (and restart) to serve from the bucket.'],
          };
        } finally {
          target.client.destroy();
        }
      },
    }),
  }),
];
