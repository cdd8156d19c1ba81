import { type Selectable, sql } from 'kysely';
import type { Db } from '../db/database';
import { lockedForClaim, lockedForUpdate } from '../db/dialect';
import type { JobStatus, JobsTable } from '../db/schema';

/**
 * The queue's SQL, and the only place that writes queue state. Every function takes the
 * transaction (or handle) it runs in; the caller (queue.ts) decides where transactions begin.
 */

export type JobRow = Selectable<JobsTable>;

export interface NewJob {
  kind: string;
  payload: string | null;
  maxAttempts: number;
  runAt: string;
  now: string;
  /** Written already claimed by this allocation, its first attempt counted (sent at once). */
  leaseId?: string;
}

export async function insertJob(trx: Db, job: NewJob): Promise<number> {
  const row = await trx
    .insertInto('jobs')
    .values({
      kind: job.kind,
      payload: job.payload,
      status: 'pending',
      attempts: job.leaseId === undefined ? 0 : 1,
      max_attempts: job.maxAttempts,
      run_at: job.runAt,
      lease_id: job.leaseId ?? null,
      created_at: job.now,
      updated_at: job.now,
      last_attempt_at: job.leaseId === undefined ? null : job.now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Whether any job of these kinds is due: a read, so an idle poll takes no write lock. */
export async function anyDue(db: Db, kinds: readonly string[], now: string): Promise<boolean> {
  if (kinds.length === 0) return false;
  const row = await db
    .selectFrom('jobs')
    .select('id')
    .where('kind', 'in', kinds)
    .where('status', '=', 'pending')
    .where('run_at', '<=', now)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Due jobs of one kind in due order (the jobs_due index: kind, status, run_at, rowid). */
export function dueJobs(trx: Db, kind: string, now: string, limit: number): Promise<JobRow[]> {
  return dueJobsQuery(trx, kind, now, limit).execute();
}

/**
 * The claim's read, as a query (its plan is checked by a test). On PostgreSQL the rows it returns
 * are locked for the claiming transaction and rows another instance is claiming or settling are
 * passed over (FOR UPDATE SKIP LOCKED): instances claiming at once never wait for each other nor
 * get the same job. Under READ COMMITTED a row changed since the statement began is read again,
 * once locked, and returned only if it still matches (pending and due).
 */
export function dueJobsQuery(trx: Db, kind: string, now: string, limit: number) {
  return lockedForClaim(
    trx,
    trx
      .selectFrom('jobs')
      .selectAll()
      .where('kind', '=', kind)
      .where('status', '=', 'pending')
      .where('run_at', '<=', now)
      .orderBy('run_at')
      .orderBy('id')
      .limit(limit),
  );
}

/** Leases jobs to one allocation until `until`, counting their attempt. */
export async function leaseJobs(
  trx: Db,
  ids: readonly number[],
  lease: { leaseId: string; until: string; now: string },
): Promise<void> {
  if (ids.length === 0) return;
  await trx
    .updateTable('jobs')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      lease_id: lease.leaseId,
      run_at: lease.until,
      last_attempt_at: lease.now,
      updated_at: lease.now,
    }))
    .where('id', 'in', ids)
    // Re-checked: the claim holds these rows locked (dueJobsQuery), so this always holds.
    .where('status', '=', 'pending')
    .execute();
}

/** Ends jobs that will not run (again) without counting an attempt. */
export async function failJobs(
  trx: Db,
  ids: readonly number[],
  error: string,
  now: string,
): Promise<void> {
  if (ids.length === 0) return;
  await trx
    .updateTable('jobs')
    .set({ status: 'failed', lease_id: null, last_error: error, updated_at: now, finished_at: now })
    .where('id', 'in', ids)
    .execute();
}

/**
 * Of these claims, the jobs their allocation still holds (pending, same lease id). On
 * PostgreSQL the rows are locked for the transaction (in id order, so that two transactions
 * never wait for each other in a cycle) and read as last committed: no other instance can take
 * the job over between this check and the write of its result.
 */
export async function heldJobs(
  trx: Db,
  claims: readonly { id: number; leaseId: string }[],
): Promise<Set<number>> {
  if (claims.length === 0) return new Set();
  const rows = await lockedForUpdate(
    trx,
    trx
      .selectFrom('jobs')
      .select(['id', 'lease_id'])
      .where(
        'id',
        'in',
        claims.map((claim) => claim.id),
      )
      .where('status', '=', 'pending')
      .orderBy('id'),
  ).execute();
  const leaseOf = new Map(rows.map((row) => [row.id, row.lease_id]));
  return new Set(
    claims.filter((claim) => leaseOf.get(claim.id) === claim.leaseId).map((claim) => claim.id),
  );
}

/**
 * Records one outcome for held jobs (see `heldJobs`): `runAt` is the next try's time when
 * `status` is pending.
 */
export async function completeJobs(
  trx: Db,
  ids: readonly number[],
  next: { status: JobStatus; runAt: string; error: string | null; now: string },
): Promise<void> {
  if (ids.length === 0) return;
  await trx
    .updateTable('jobs')
    .set({
      status: next.status,
      run_at: next.runAt,
      lease_id: null,
      last_error: next.error,
      updated_at: next.now,
      finished_at: next.status === 'pending' ? null : next.now,
    })
    .where('id', 'in', ids)
    .execute();
}

/** Hands a claimed, never-run job back: attempt uncounted, due at once. True if still held. */
export async function releaseJob(
  trx: Db,
  job: { id: number; leaseId: string },
  now: string,
): Promise<boolean> {
  const released = await trx
    .updateTable('jobs')
    .set((eb) => ({
      attempts: eb('attempts', '-', 1),
      lease_id: null,
      run_at: now,
      updated_at: now,
    }))
    .where('id', '=', job.id)
    .where('lease_id', '=', job.leaseId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return released.numUpdatedRows > 0n;
}

export function jobById(trx: Db, id: number): Promise<JobRow | undefined> {
  return trx.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Due now again; a finished job is reopened with `maxAttempts` (one more attempt). */
export async function rescheduleJob(
  trx: Db,
  id: number,
  next: { now: string; maxAttempts?: number },
): Promise<void> {
  await trx
    .updateTable('jobs')
    .set({
      status: 'pending',
      run_at: next.now,
      finished_at: null,
      updated_at: next.now,
      ...(next.maxAttempts === undefined ? {} : { max_attempts: next.maxAttempts }),
    })
    .where('id', '=', id)
    .execute();
}

/** Whether a job of this kind waits to run (or is running). */
export async function hasPendingJob(db: Db, kind: string): Promise<boolean> {
  const row = await db
    .selectFrom('jobs')
    .select('id')
    .where('kind', '=', kind)
    .where('status', '=', 'pending')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Per kind: jobs waiting (pending, due or not) and jobs that gave up (failed); for the metrics. */
export function jobCountsByKind(
  db: Db,
): Promise<{ kind: string; pending: number; failed: number }[]> {
  return db
    .selectFrom('jobs')
    .select((eb) => [
      'kind',
      eb.fn
        .sum<number>(
          eb.case().when('status', '=', 'pending').then(sql.lit(1)).else(sql.lit(0)).end(),
        )
        .as('pending'),
      eb.fn
        .sum<number>(
          eb.case().when('status', '=', 'failed').then(sql.lit(1)).else(sql.lit(0)).end(),
        )
        .as('failed'),
    ])
    .groupBy('kind')
    .execute();
}

/** The last period claimed for a scheduled pass (a read: a pass already taken costs no write). */
export async function claimedPeriod(db: Db, name: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('scheduled_runs')
    .select('period_start')
    .where('name', '=', name)
    .executeTakeFirst();
  return row?.period_start;
}

/**
 * Claims the period starting at `periodStart` for the pass `name`: one statement, true for the
 * one caller that moved the row to this period. Of instances claiming at once, the first takes
 * the row's lock and the others, re-reading it once it is theirs, find the period taken (a
 * serializable transaction in their way is retried and finds the same).
 */
export async function claimPeriod(
  db: Db,
  claim: { name: string; periodStart: string; now: string },
): Promise<boolean> {
  const row = await db
    .insertInto('scheduled_runs')
    .values({
      name: claim.name,
      period_start: claim.periodStart,
      claimed_at: claim.now,
      passes: 1,
    })
    .onConflict((conflict) =>
      conflict
        .column('name')
        .doUpdateSet((eb) => ({
          period_start: eb.ref('excluded.period_start'),
          claimed_at: eb.ref('excluded.claimed_at'),
          passes: eb('scheduled_runs.passes', '+', 1),
        }))
        .where('scheduled_runs.period_start', '<', (eb) => eb.ref('excluded.period_start')),
    )
    .returning('name')
    .executeTakeFirst();
  return row !== undefined;
}

/** How many periods the pass `name` has claimed (0: never). */
export async function passCount(db: Db, name: string): Promise<number> {
  const row = await db
    .selectFrom('scheduled_runs')
    .select('passes')
    .where('name', '=', name)
    .executeTakeFirst();
  return row?.passes ?? 0;
}
