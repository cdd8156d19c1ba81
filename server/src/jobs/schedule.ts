import type { Db } from '../db/database';
import type { Clock } from '../platform/clock';
import { claimedPeriod, claimPeriod } from './queries';

/**
 * Scheduled passes that run once per period across every instance (and process) on the
 * database. Time is cut into periods of `periodMs` from the epoch (by the clock, so every
 * instance agrees on the period's bounds); the first instance to look in a period claims it in
 * the database (scheduled_runs, one conditional upsert) and runs the pass; the others skip it.
 * Works alike on SQLite (the server and the CLI on one file) and PostgreSQL. A pass whose
 * instance dies mid-way is not run again in that period: the next period's pass catches up, so
 * a pass must be one that finds all its work each time (every overdue item, not "the items of
 * this period").
 */

export interface PeriodicDeps {
  db: Db;
  clock: Clock;
}

/** The first instant of the period `at` falls in, ISO-8601 UTC. */
export function periodStart(at: Date, periodMs: number): string {
  return new Date(Math.floor(at.getTime() / periodMs) * periodMs).toISOString();
}

/** Claims the current period for `name`: true when this caller is to run the pass. */
export async function claimCurrentPeriod(
  deps: PeriodicDeps,
  name: string,
  periodMs: number,
): Promise<boolean> {
  const now = deps.clock.now();
  const start = periodStart(now, periodMs);
  const last = await claimedPeriod(deps.db, name);
  if (last !== undefined && last >= start) return false;
  return claimPeriod(deps.db, { name, periodStart: start, now: now.toISOString() });
}
