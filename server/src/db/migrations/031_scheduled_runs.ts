/**
 * Scheduled passes that must run once per period across every instance and process on the
 * database (issue 19): the deadline passes (overdue workflow tasks, expired contracts). One row
 * per pass: `period_start` is the start of the last period a pass was claimed for (ISO-8601
 * UTC), `passes` how many periods were claimed in all. A pass claims its period by one
 * conditional upsert (`… ON CONFLICT (name) DO UPDATE … WHERE period_start < excluded.period_start`):
 * of instances claiming at once, one gets the row, the others skip the period (jobs/schedule.ts).
 */
export const scheduledRuns = `
CREATE TABLE scheduled_runs (
  name TEXT PRIMARY KEY,
  period_start TEXT NOT NULL,
  claimed_at TEXT NOT NULL,
  passes INTEGER NOT NULL
) WITHOUT ROWID;
`;

/** The same table on PostgreSQL. */
export const scheduledRunsPostgres = `
CREATE TABLE scheduled_runs (
  name TEXT PRIMARY KEY,
  period_start TEXT NOT NULL,
  claimed_at TEXT NOT NULL,
  passes BIGINT NOT NULL
);
`;
