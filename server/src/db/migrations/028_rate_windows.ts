import { postgresOf } from './sqlParts';

/**
 * Rate limits shared by every instance on the database: one row per (bucket, caller, one-minute
 * window), counted by one atomic upsert (`INSERT … ON CONFLICT … DO UPDATE SET count = count + 1
 * RETURNING count`), so several instances, or several writers at once, cannot hand a caller more
 * than its budget. `bucket` is a rate class (`auth`, `api`, `upload`) or the failed credential
 * checks per address (`auth-failures`); `caller` names the checked credential or the client
 * address, never a secret; `window_start` is the window's first instant (ISO-8601 UTC). Windows
 * older than the one before the current one are deleted as the minutes pass (auth/rateLimit.ts).
 */
export const rateWindows = `
CREATE TABLE rate_windows (
  bucket TEXT NOT NULL,
  caller TEXT NOT NULL,
  window_start TEXT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (bucket, caller, window_start)
) WITHOUT ROWID;
CREATE INDEX rate_windows_start ON rate_windows(window_start);
`;

/** The same table on PostgreSQL. */
export const rateWindowsPostgres = postgresOf(rateWindows);
