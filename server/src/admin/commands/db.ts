import { z } from 'zod';
import { type MigrationReport, migrateToPostgres } from '../../dbcopy/migrate';
import { base64SecretPrefix } from '../../platform/secrets';
import { type Command, command, option } from '../command';

/** A PostgreSQL URL: `postgres://` or `postgresql://`, parsable. */
const postgresUrl = option.text.refine((value) => {
  if (!/^postgres(ql)?:\/\//.test(value)) return false;
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}, 'must be a PostgreSQL URL (postgres://user:password@host:port/database)');

/** How the PostgreSQL deployment gets the master secret: never the secret, only where it is. */
function secretLines(secret: MigrationReport['masterSecret']): string[] {
  if (secret.from === 'SECRET_KEY') {
    return [
      'Give the PostgreSQL deployment the same SECRET_KEY as this one (its sealed keys, webhook secrets and API keys need it).',
    ];
  }
  return [
    `Give the PostgreSQL deployment the master secret of ${secret.file}: SECRET_KEY=${base64SecretPrefix}<the contents of that file>, for example SECRET_KEY="${base64SecretPrefix}$(cat ${secret.file})" (its sealed keys, webhook secrets and API keys need it).`,
  ];
}

/**
 * `admin db migrate-to-postgres --to URL`: the SQLite database under DATA_DIR copied into an
 * empty PostgreSQL database and checked (dbcopy/migrate.ts). Offline: the runtime is not opened
 * on SQLite, and the server must be stopped (a write during the copy refuses it).
 */
export const dbCommands: Command[] = [
  command({
    name: 'db migrate-to-postgres',
    options: z.object({ to: postgresUrl }),
    prepare: ({ to }) => ({
      offline: async ({ config }) => {
        const report = await migrateToPostgres(config, to);
        const warnings = [
          ...(report.auditTrails.brokenInSource.length > 0
            ? [
                `Audit trails already broken in SQLite (copied as they are): ${report.auditTrails.brokenInSource.join(', ')}.`,
              ]
            : []),
          ...(report.signedPdfs.invalidInSource.length > 0
            ? [
                `Signed PDFs that did not verify in SQLite either: ${report.signedPdfs.invalidInSource.join(', ')}.`,
              ]
            : []),
        ];
        const skipped = report.skipped
          .map((table) => `${table.name} (${table.rows} rows: ${table.reason})`)
          .join('; ');
        return {
          json: { ...report },
          lines: [
            `Copied ${report.rows} rows of ${report.tables.length} tables into ${report.target} (schema ${report.schemaVersion}) in one transaction; ${report.sequences} identity sequences set past the copied ids.`,
            ...report.tables.map((table) => `  ${table.name.padEnd(28)} ${table.rows}`),
            ...(skipped === '' ? [] : [`Not copied: ${skipped}.`]),
            `Checked: every table's row count and row digest equal on both sides; ${report.auditTrails.checked} audit trails (${report.auditTrails.events} events) hold; ${report.signedPdfs.valid} of ${report.signedPdfs.checked} signed PDFs verify on PostgreSQL.`,
            ...secretLines(report.masterSecret),
            'Then start the server with DATABASE_URL set to the target (and the same DATA_DIR files, or FILE_STORE=s3 after "admin storage copy --to s3").',
          ],
          warnings,
        };
      },
    }),
  }),
];
