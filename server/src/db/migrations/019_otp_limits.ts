import { postgresOf } from './sqlParts';

/**
 * Limits on one-time codes across signing sessions: each code sent and each wrong code entered
 * is a row, per contract signer (`signer_id`) or per dossier task's signing user (`task_id`,
 * `user_id`), whatever the session. The sessions count the rows of a rolling window (sends per
 * hour, wrong codes per day), so opening a new session resets nothing. Rows older than the
 * longest window are deleted as new ones come; the audit trail keeps the history.
 */
export const otpLimits = `
CREATE TABLE otp_events (
  id INTEGER PRIMARY KEY,
  signer_id INTEGER REFERENCES contract_signers(id),
  task_id INTEGER REFERENCES tasks(id),
  user_id INTEGER REFERENCES users(id),
  kind TEXT NOT NULL CHECK (kind IN ('sent', 'failed')),
  at TEXT NOT NULL,
  CHECK (
    (signer_id IS NOT NULL AND task_id IS NULL AND user_id IS NULL)
    OR (signer_id IS NULL AND task_id IS NOT NULL AND user_id IS NOT NULL)
  )
);
CREATE INDEX otp_events_signer ON otp_events(signer_id, kind, at) WHERE signer_id IS NOT NULL;
CREATE INDEX otp_events_task_user ON otp_events(task_id, user_id, kind, at)
  WHERE task_id IS NOT NULL;
`;

/** The same schema on PostgreSQL, translated by the common conventions. */
export const otpLimitsPostgres = postgresOf(otpLimits);
