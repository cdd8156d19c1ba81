import { sessionColumns } from './015_signing_sessions';
import { postgresOf, restartIdentityPostgres } from './sqlParts';

/** The rebuilt table after its name: both subjects, exactly one per row. */
const rebuiltTable = ` (
  id INTEGER PRIMARY KEY,
  public_id TEXT NOT NULL UNIQUE,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id),
  contract_id INTEGER REFERENCES contracts(id),
  signer_id INTEGER REFERENCES contract_signers(id),
  task_id INTEGER REFERENCES tasks(id),
  user_id INTEGER REFERENCES users(id),
  file_id INTEGER REFERENCES dossier_files(id),
${sessionColumns},
  CHECK (
    (contract_id IS NOT NULL AND signer_id IS NOT NULL
      AND task_id IS NULL AND user_id IS NULL AND file_id IS NULL)
    OR (contract_id IS NULL AND signer_id IS NULL
      AND task_id IS NOT NULL AND user_id IS NOT NULL AND file_id IS NOT NULL)
  )
);`;

/** The columns of both subjects, in the order of the table above. */
const subjectColumns = `id, public_id, tenant_id, contract_id, signer_id, method, preparation_id, source_version,
  state, created_at, expires_at, ended_at, link_token_hash, link_expires_at, link_used_at,
  page_token_hash, otp_hash, otp_expires_at, otp_sent_at, otp_failures, signature_id,
  signed_at, certificate_info`;

const sessionIndexes = `CREATE UNIQUE INDEX signing_sessions_one_open ON signing_sessions(signer_id)
  WHERE state = 'open' AND signer_id IS NOT NULL;
CREATE UNIQUE INDEX signing_sessions_one_open_task ON signing_sessions(task_id, user_id)
  WHERE state = 'open' AND task_id IS NOT NULL;
CREATE INDEX signing_sessions_contract ON signing_sessions(contract_id);`;

/**
 * Signing sessions of dossier tasks: the same sessions, whose subject is either a contract signer
 * (`contract_id`, `signer_id`) or a dossier task's turn (`task_id`, the signing user `user_id`,
 * the MAIN file `file_id` being signed). SQLite cannot relax NOT NULL in place, so the table is
 * rebuilt with its rows; nothing references it.
 *
 * - Exactly one subject per row (CHECK).
 * - At most one open session per contract signer, and per (task, user): a new initiate
 *   supersedes the open one.
 */
export const taskSigningSessions = `
CREATE TABLE signing_sessions_next${rebuiltTable}
INSERT INTO signing_sessions_next (
  ${subjectColumns})
SELECT
  ${subjectColumns}
FROM signing_sessions;
DROP TABLE signing_sessions;
ALTER TABLE signing_sessions_next RENAME TO signing_sessions;
${sessionIndexes}
`;

/**
 * On PostgreSQL NOT NULL could be dropped in place, but the new columns would then follow the
 * last one; the table is rebuilt as on SQLite so that both keep one column order. The rows go
 * through a temporary copy so that the new table is created under its own name (its constraints
 * are named after it, as on a fresh database), and the identity continues after the copied ids.
 */
export const taskSigningSessionsPostgres = `
CREATE TEMPORARY TABLE signing_sessions_016 AS SELECT * FROM signing_sessions;
DROP TABLE signing_sessions;
CREATE TABLE signing_sessions${postgresOf(rebuiltTable)}
INSERT INTO signing_sessions (
  ${subjectColumns})
SELECT
  ${subjectColumns}
FROM signing_sessions_016;
DROP TABLE signing_sessions_016;
${restartIdentityPostgres('signing_sessions')}
${postgresOf(sessionIndexes)}
`;
