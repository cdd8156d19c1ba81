import { z } from 'zod';
import { createBackup } from '../../backup/backup';
import { secretsNote } from '../../backup/manifest';
import { restoreBackup } from '../../backup/restore';
import { systemClock } from '../../platform/clock';
import { bytesText, type Command, command, option } from '../command';

/** `12 contracts, 3 dossiers, …` from a manifest's counts. */
function countsText(counts: Record<string, number>): string {
  return Object.entries(counts)
    .map(([table, count]) => `${count} ${table.replaceAll('_', ' ')}`)
    .join(', ');
}

function missingWarning(missing: string[]): string[] {
  if (missing.length === 0) return [];
  return [
    `${missing.length} stored files the database names were not in the file store: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''} (see "admin storage sweep --dry-run"; they are listed in the manifest as missingFiles).`,
  ];
}

/**
 * `admin backup --out DIR` (while the server runs) and `admin restore --from DIR` (into a new
 * DATA_DIR). Both run without opening the runtime: the backup reads the database on a
 * connection of its own, the restore must not create anything in DATA_DIR before it is done.
 */
export const backupCommands: Command[] = [
  command({
    name: 'backup',
    options: z.object({ out: option.text }),
    prepare: ({ out }) => ({
      offline: async ({ config }) => {
        const report = await createBackup(config, out, systemClock);
        const warnings = [
          ...missingWarning(report.missingFiles),
          ...(report.masterKeyFile
            ? [
                `SECRET_KEY is not set: the service uses ${report.masterKeyFile}, which is not in the backup. Keep a copy of it apart from the backup; a restore needs it.`,
              ]
            : []),
        ];
        return {
          json: { ...report, secrets: secretsNote },
          lines: [
            report.filesInBucket
              ? `Backup written to ${report.directory} (${bytesText(report.bytes)}): the database as of ${report.createdAt} (schema ${report.schemaVersion}; ${countsText(report.counts)}). FILE_STORE=s3: the stored files live in the bucket and are not in this backup; the bucket's own versioning or replication backs them up (docs/operations.md).`
              : `Backup written to ${report.directory} (${bytesText(report.bytes)}): the database as of ${report.createdAt} (schema ${report.schemaVersion}; ${countsText(report.counts)}) and the ${report.storedFiles} stored files it names.`,
            `Manifest SHA-256: ${report.manifestSha256}`,
            secretsNote,
          ],
          warnings,
        };
      },
    }),
  }),
  command({
    name: 'restore',
    options: z.object({ from: option.text }),
    prepare: ({ from }) => ({
      offline: async ({ config }) => {
        const report = await restoreBackup(config, from);
        const warnings = [
          ...missingWarning(report.missingFiles),
          ...(report.masterSecret === 'none'
            ? [
                'Neither SECRET_KEY nor DATA_DIR/master.key is set: start the server with the SECRET_KEY of the service that was backed up (or put its master.key into DATA_DIR first). A new master secret cannot read the keys in the backup.',
              ]
            : []),
        ];
        return {
          json: { ...report },
          lines: [
            `Restored the backup of ${report.createdAt} into ${report.dataDir} (${bytesText(report.bytes)}, every file checked against the manifest): schema ${report.schemaVersion}; ${countsText(report.counts)}; ${report.storedFiles} stored files.`,
            'Start the server on it; pending migrations are applied at start.',
          ],
          warnings,
        };
      },
    }),
  }),
];
