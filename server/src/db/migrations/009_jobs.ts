import { postgresOf, restartIdentityPostgres } from './sqlParts';

/**
 * One durable job queue. Until now the webhook outbox (`webhook_deliveries`) and the notification
 * outbox (`notify_outbox`) each carried their own claim and lease columns; from here on the
 * `jobs` table alone holds queue state (status, attempts, due time, lease), and those tables keep
 * only their domain facts plus `job_id`, the job that sends them.
 *
 * The domain row points at its job (not the job at the row) so the reference is a real foreign
 * key, and so kinds without a domain row (a revocation fetch) need no column in `jobs`.
 *
 * Existing rows keep their state: every delivery and every message that was not suppressed gets
 * a job with its status (delivered and sent become done), its attempts, its due time and its
 * lease. While a job is leased, `run_at` holds the lease expiry, so an expired lease is simply
 * due again (as `next_attempt_at` did for deliveries; messages kept the expiry apart).
 */
export const jobs = `
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  payload TEXT,
  status TEXT NOT NULL CHECK (status IN ('pending', 'done', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  run_at TEXT NOT NULL,
  lease_id TEXT,
  last_error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  last_attempt_at TEXT,
  finished_at TEXT
);
-- The claim: equality on kind and status, range and order on run_at (then rowid).
CREATE INDEX jobs_due ON jobs(kind, status, run_at);

-- Webhook deliveries: job ids equal delivery ids (the table is empty before this point).
INSERT INTO jobs (id, kind, status, attempts, max_attempts, run_at, lease_id, last_error,
                  created_at, updated_at, last_attempt_at, finished_at)
SELECT d.id, 'webhook.delivery',
       CASE d.status WHEN 'delivered' THEN 'done' ELSE d.status END,
       d.attempts, d.max_attempts, d.next_attempt_at, d.lease_id, d.last_error,
       d.created_at, d.updated_at,
       (SELECT MAX(a.started_at) FROM webhook_attempts a WHERE a.delivery_id = d.id),
       d.finished_at
FROM webhook_deliveries d;
ALTER TABLE webhook_deliveries ADD COLUMN job_id INTEGER REFERENCES jobs(id);
UPDATE webhook_deliveries SET job_id = id;

-- Messages: job ids follow the deliveries' (offset kept in a temporary table).
CREATE TEMP TABLE job_offset AS SELECT COALESCE(MAX(id), 0) AS base FROM jobs;
INSERT INTO jobs (id, kind, status, attempts, max_attempts, run_at, lease_id, last_error,
                  created_at, updated_at, last_attempt_at, finished_at)
SELECT n.id + (SELECT base FROM job_offset), 'notify.' || n.channel,
       CASE n.status WHEN 'sent' THEN 'done' ELSE n.status END,
       n.attempts, MAX(6, n.attempts),
       CASE WHEN n.lease_id IS NOT NULL AND n.lease_expires_at IS NOT NULL
            THEN n.lease_expires_at ELSE n.next_attempt_at END,
       n.lease_id, n.last_error, n.created_at, COALESCE(n.last_attempt_at, n.created_at),
       n.last_attempt_at,
       CASE WHEN n.status = 'sent' THEN n.sent_at
            WHEN n.status = 'failed' THEN COALESCE(n.last_attempt_at, n.created_at) END
FROM notify_outbox n
WHERE n.status <> 'suppressed';
ALTER TABLE notify_outbox ADD COLUMN job_id INTEGER REFERENCES jobs(id);
UPDATE notify_outbox SET job_id = id + (SELECT base FROM job_offset) WHERE status <> 'suppressed';
DROP TABLE job_offset;

-- The handler finds its row from the job.
CREATE UNIQUE INDEX webhook_deliveries_job ON webhook_deliveries(job_id);
CREATE UNIQUE INDEX notify_outbox_job ON notify_outbox(job_id) WHERE job_id IS NOT NULL;

-- The queue columns leave the domain tables (their indexes first: SQLite keeps indexed columns).
DROP INDEX webhook_deliveries_due;
DROP INDEX webhook_deliveries_status;
ALTER TABLE webhook_deliveries DROP COLUMN status;
ALTER TABLE webhook_deliveries DROP COLUMN attempts;
ALTER TABLE webhook_deliveries DROP COLUMN max_attempts;
ALTER TABLE webhook_deliveries DROP COLUMN next_attempt_at;
ALTER TABLE webhook_deliveries DROP COLUMN lease_id;
ALTER TABLE webhook_deliveries DROP COLUMN lease_expires_at;
ALTER TABLE webhook_deliveries DROP COLUMN last_error;
ALTER TABLE webhook_deliveries DROP COLUMN updated_at;
ALTER TABLE webhook_deliveries DROP COLUMN finished_at;
-- An attempt is found by its delivery and number (unique); the lease is the job's.
ALTER TABLE webhook_attempts DROP COLUMN lease_id;

DROP INDEX notify_outbox_due;
ALTER TABLE notify_outbox DROP COLUMN status;
ALTER TABLE notify_outbox DROP COLUMN attempts;
ALTER TABLE notify_outbox DROP COLUMN next_attempt_at;
ALTER TABLE notify_outbox DROP COLUMN lease_id;
ALTER TABLE notify_outbox DROP COLUMN lease_expires_at;
ALTER TABLE notify_outbox DROP COLUMN last_error;
ALTER TABLE notify_outbox DROP COLUMN last_attempt_at;
`;

/**
 * The same step on PostgreSQL (translated: GREATEST for SQLite's two-argument MAX among the
 * rest), then the jobs' identity continued after the ids copied from the deliveries and messages.
 */
export const jobsPostgres = `${postgresOf(jobs)}${restartIdentityPostgres('jobs')}
`;
