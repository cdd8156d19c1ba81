import crypto from 'node:crypto';
import { CodedError } from '@esign/shared';
import { type Db, inTransaction, onNotification, type TransactionOptions } from '../db/database';
import { dialectOf, notify } from '../db/dialect';
import { metrics } from '../metrics';
import type { Clock } from '../platform/clock';
import {
  anyDue,
  completeJobs,
  dueJobs,
  failJobs,
  hasPendingJob,
  heldJobs,
  insertJob,
  type JobRow,
  leaseJobs,
  releaseJob,
} from './queries';

/**
 * The one durable job queue (the liteque / graphile-worker pattern), on SQLite or on PostgreSQL
 * with every instance running a runner:
 * - `enqueue` writes a job INSIDE the caller's transaction (the transactional outbox: the business
 *   write and its job commit or roll back together) and wakes the runners: this process's on
 *   SQLite, every instance's at commit on PostgreSQL (NOTIFY on `jobsChannel`);
 * - a claim is one short transaction (BEGIN IMMEDIATE on SQLite; on PostgreSQL READ COMMITTED
 *   with the due rows locked FOR UPDATE SKIP LOCKED, see `claimTransaction`): due jobs are leased to an allocation id
 *   (`lease_id`) until an expiry held in `run_at`, so an expired lease is simply due again; the
 *   attempt is counted at claim, so a run killed mid-way has used it and a job never loops;
 * - the handler runs outside any transaction;
 * - results are recorded in group commits (one transaction for many), each only if its
 *   allocation id still holds the job; a late result of a taken-over job changes nothing;
 * - claims never started are handed back (attempt uncounted, due at once).
 * A kind plugs in its own facts through hooks that run inside those same transactions.
 */

/** One job as a claim hands it to its kind. */
export interface ClaimedJob {
  id: number;
  kind: string;
  payload: string | null;
  /** The allocation id of this claim. */
  leaseId: string;
  /** This claim's attempt: 1 for the first. */
  attempt: number;
  maxAttempts: number;
  /** A previous claim's lease expired without a result (its process stopped mid-run). */
  interrupted: boolean;
}

/** A job ended at claim time without running. */
export interface EndedJob {
  id: number;
  attempts: number;
  interrupted: boolean;
  error: string;
}

/** What `prepare` makes of a claimed job: the work to run, or why it ends now (failed). */
export type Prepared<W> = { work: W } | { fail: string };

/** Where a result leaves its job; lease_lost: another claim holds it, only the kind's facts count. */
export type JobState = 'done' | 'retry' | 'failed' | 'lease_lost';

export interface Recorded<W, R> {
  job: ClaimedJob;
  work: W;
  /** The handler's result; null when it threw. */
  result: R | null;
  /** null on success. */
  error: string | null;
  state: JobState;
}

/** A job kind: its handler, its retry schedule and concurrency, and its hooks. */
export interface JobKind<W, R> {
  kind: string;
  /**
   * Runs of this kind at once (its own slots, which no other kind uses). Default
   * `defaultConcurrency`.
   */
  concurrency?: number;
  /**
   * How long a claim holds a job; above the handler's own deadline. A run still going then is
   * abandoned (a failed attempt), so a hung handler never holds its slot for good.
   */
  leaseMs: number;
  /** Waits after the 1st, 2nd, … failed attempt (the last repeats). */
  retryDelaysMs: readonly number[];
  /** last_error of a job whose last attempt was cut off. */
  interruptedError: string;
  /** In the claim transaction, before the attempt is counted: loads the work, or refuses. */
  prepare(trx: Db, jobs: readonly ClaimedJob[], now: string): Promise<Prepared<W>[]>;
  /** Outside any transaction. A throw is a failed attempt with the error's text. */
  run(work: W, job: ClaimedJob): Promise<R>;
  /** null when the result is a success; otherwise why the attempt failed. */
  errorOf(result: R): string | null;
  /**
   * In the group commit, after the jobs' own rows: the kind's facts of its results in that
   * commit (one call per kind and commit, so that a kind can write them in a few statements).
   */
  record(trx: Db, recorded: readonly Recorded<W, R>[], now: string): Promise<void>;
  /** In the claim transaction: jobs ended without running (refused, or attempts used up). */
  ended?(trx: Db, jobs: readonly EndedJob[], now: string): Promise<void>;
  /** After the commits, for the log. */
  reportEnded?(jobs: readonly EndedJob[]): void;
  reportRecorded?(recorded: Recorded<W, R>): void;
  /** In the release transaction: undo what `prepare` wrote for a claim handed back. */
  released?(trx: Db, job: ClaimedJob): Promise<void>;
  /** When the runner stops (connections to close). */
  close?(): void;
}

/** The slots of a kind that names none. */
export const defaultConcurrency = 2;

/** A claimed job bound to its kind, ready to run; the runner needs no kind's types. */
export interface Task {
  job: ClaimedJob;
  kind: string;
  execute(): Promise<Finished>;
}

/** A run's result bound to its kind, ready to record. */
export interface Finished {
  job: ClaimedJob;
  error: string | null;
  /** Adds the result, in `state`, to its kind's share of `batches` (one group commit). */
  stage(batches: ResultBatches, state: JobState): void;
  report(state: JobState): void;
}

/**
 * The results of one group commit, per kind: each kind's `record` is called once with its
 * share, after every job row of the commit is written.
 */
export class ResultBatches {
  readonly #writers: ((trx: Db, now: string) => Promise<void>)[] = [];
  /** A kind's first result of this commit registers the write of its share. */
  add(write: (trx: Db, now: string) => Promise<void>): void {
    this.#writers.push(write);
  }
  async write(trx: Db, now: string): Promise<void> {
    for (const write of this.#writers) await write(trx, now);
  }
}

/** Binds results to one kind; results bound by the same recorder share its `record` calls. */
export interface KindRecorder<W, R> {
  finished(job: ClaimedJob, work: W, result: R | null, error: string | null): Finished;
}

export function kindRecorder<W, R>(spec: JobKind<W, R>): KindRecorder<W, R> {
  const shares = new WeakMap<ResultBatches, Recorded<W, R>[]>();
  return {
    finished(job, work, result, error) {
      const entry = (state: JobState): Recorded<W, R> => ({ job, work, result, error, state });
      return {
        job,
        error,
        stage(batches, state) {
          let share = shares.get(batches);
          if (!share) {
            const list: Recorded<W, R>[] = [];
            shares.set(batches, list);
            batches.add((trx, now) => spec.record(trx, list, now));
            share = list;
          }
          share.push(entry(state));
        },
        report: (state) => spec.reportRecorded?.(entry(state)),
      };
    },
  };
}

/** A kind as the runner holds it (its work and result types closed over). */
export interface RegisteredKind {
  kind: string;
  concurrency: number;
  leaseMs: number;
  retryDelaysMs: readonly number[];
  claim(trx: Db, rows: readonly JobRow[], leaseId: string, now: string): Promise<ClaimOutcome>;
  reportEnded(jobs: readonly EndedJob[]): void;
  release(trx: Db, job: ClaimedJob, now: string): Promise<boolean>;
  close(): void;
}

interface ClaimOutcome {
  tasks: Task[];
  ended: EndedJob[];
}

/** An error as stored in last_error and logged: its code and message, never a body. */
export function errorText(error: unknown): string {
  if (error instanceof CodedError) return `${error.code}: ${error.message}`.slice(0, 500);
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return (typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message)
    .replace(/\s+/g, ' ')
    .slice(0, 500);
}

/**
 * The run's result, or a rejection shortly before its lease runs out (so that the failure is
 * recorded while the claim still holds the job): the slot frees and the attempt counts as
 * failed. The handler itself cannot be stopped; it should keep its own, shorter deadline.
 */
function withinLease<R>(run: Promise<R>, leaseMs: number): Promise<R> {
  const deadlineMs = Math.round(leaseMs - Math.min(5_000, leaseMs / 10));
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the run did not end within ${deadlineMs} ms; abandoned`)),
      deadlineMs,
    );
  });
  return Promise.race([run, expired]).finally(() => clearTimeout(timer));
}

/** A run bound to its kind: runs the handler and keeps what recording needs. */
function runTask<W, R>(
  spec: JobKind<W, R>,
  recorder: KindRecorder<W, R>,
  job: ClaimedJob,
  work: W,
): Task {
  return {
    job,
    kind: spec.kind,
    async execute() {
      let result: R | null = null;
      let error: string | null;
      try {
        result = await withinLease(spec.run(work, job), spec.leaseMs);
        error = spec.errorOf(result);
      } catch (thrown) {
        error = errorText(thrown);
      }
      return recorder.finished(job, work, result, error);
    },
  };
}

export function registerKind<W, R>(spec: JobKind<W, R>): RegisteredKind {
  const recorder = kindRecorder(spec);
  return {
    kind: spec.kind,
    concurrency: spec.concurrency ?? defaultConcurrency,
    leaseMs: spec.leaseMs,
    retryDelaysMs: spec.retryDelaysMs,
    async claim(trx, rows, leaseId, now) {
      // A job whose attempts are used up is here because its last lease expired.
      const ended: EndedJob[] = rows
        .filter((row) => row.attempts >= row.max_attempts)
        .map((row) => ({
          id: row.id,
          attempts: row.attempts,
          interrupted: true,
          error: spec.interruptedError,
        }));
      const claims: ClaimedJob[] = rows
        .filter((row) => row.attempts < row.max_attempts)
        .map((row) => ({
          id: row.id,
          kind: row.kind,
          payload: row.payload,
          leaseId,
          attempt: row.attempts + 1,
          maxAttempts: row.max_attempts,
          interrupted: row.lease_id !== null,
        }));
      const prepared = claims.length > 0 ? await spec.prepare(trx, claims, now) : [];
      const tasks: Task[] = [];
      claims.forEach((job, index) => {
        const outcome = prepared[index]!;
        if ('fail' in outcome) {
          ended.push({
            id: job.id,
            attempts: job.attempt - 1,
            interrupted: job.interrupted,
            error: outcome.fail,
          });
        } else tasks.push(runTask(spec, recorder, job, outcome.work));
      });
      for (const job of ended) await failJobs(trx, [job.id], job.error, now);
      if (ended.length > 0) await spec.ended?.(trx, ended, now);
      await leaseJobs(
        trx,
        tasks.map((task) => task.job.id),
        { leaseId, until: new Date(Date.parse(now) + spec.leaseMs).toISOString(), now },
      );
      return { tasks, ended };
    },
    reportEnded: (jobs) => {
      if (jobs.length > 0) spec.reportEnded?.(jobs);
    },
    async release(trx, job, now) {
      const held = await releaseJob(trx, job, now);
      if (held) await spec.released?.(trx, job);
      return held;
    },
    close: () => spec.close?.(),
  };
}

export interface QueueDeps {
  db: Db;
  clock: Clock;
}

/** Which kinds a claim asks for, and how many of each at most. */
export type Wanted = readonly { kind: RegisteredKind; limit: number }[];

/** In `trx`: claims up to `limit` due jobs of each kind; the ended ones are reported after. */
async function claimIn(
  trx: Db,
  wanted: Wanted,
  now: string,
): Promise<{ tasks: Task[]; ended: { kind: RegisteredKind; jobs: EndedJob[] }[] }> {
  const leaseId = crypto.randomUUID();
  const tasks: Task[] = [];
  const ended: { kind: RegisteredKind; jobs: EndedJob[] }[] = [];
  for (const { kind, limit } of wanted) {
    if (limit <= 0) continue;
    const rows = await dueJobs(trx, kind.kind, now, limit);
    if (rows.length === 0) continue;
    const outcome = await kind.claim(trx, rows, leaseId, now);
    tasks.push(...outcome.tasks);
    ended.push({ kind, jobs: outcome.ended });
  }
  return { tasks, ended };
}

function nextOf(
  finished: Finished,
  delays: readonly number[],
  nowMs: number,
): { status: 'done' | 'pending' | 'failed'; runAt: string } {
  const now = new Date(nowMs).toISOString();
  if (finished.error === null) return { status: 'done', runAt: now };
  const { attempt, maxAttempts } = finished.job;
  if (attempt >= maxAttempts) return { status: 'failed', runAt: now };
  const delay = delays[Math.min(attempt, delays.length) - 1] ?? 0;
  return { status: 'pending', runAt: new Date(nowMs + delay).toISOString() };
}

/**
 * In `trx`: each result moves its job on, if its allocation still holds it: one statement per
 * outcome (done, or one retry time and error), then each kind's facts of its share.
 */
async function recordIn(
  trx: Db,
  delaysOf: (kind: string) => readonly number[],
  finished: readonly Finished[],
  nowMs: number,
): Promise<JobState[]> {
  if (finished.length === 0) return [];
  const now = new Date(nowMs).toISOString();
  const held = await heldJobs(
    trx,
    finished.map((item) => item.job),
  );
  const outcomes = new Map<
    string,
    { next: ReturnType<typeof nextOf>; error: string | null; ids: number[] }
  >();
  const states = finished.map((item): JobState => {
    const next = nextOf(item, delaysOf(item.job.kind), nowMs);
    if (!held.has(item.job.id)) return 'lease_lost';
    // A job is held by one claim only: a second result for it in this batch is lease_lost.
    held.delete(item.job.id);
    const key = JSON.stringify([next.status, next.runAt, item.error]);
    const outcome = outcomes.get(key) ?? { next, error: item.error, ids: [] };
    outcome.ids.push(item.job.id);
    outcomes.set(key, outcome);
    return next.status === 'pending' ? 'retry' : next.status;
  });
  for (const { next, error, ids } of outcomes.values()) {
    await completeJobs(trx, ids, { ...next, error, now });
  }
  const batches = new ResultBatches();
  finished.forEach((item, index) => {
    item.stage(batches, states[index]!);
  });
  await batches.write(trx, now);
  return states;
}

/**
 * One short transaction (one fsync; `claimTransaction`) that records `finished` (a group commit:
 * each job moves on, done, retry later on its kind's schedule or failed, if its allocation still
 * holds it) and claims up to `limit` due jobs of each wanted kind (jobs whose attempts are used
 * up, and jobs their kind refuses, end failed instead of being handed out). Results and claims
 * share the commit: a busy runner pays one fsync per round, not two.
 */
export async function settleAndClaim(
  deps: QueueDeps,
  delaysOf: (kind: string) => readonly number[],
  finished: readonly Finished[],
  wanted: Wanted,
  options: { probe?: boolean } = {},
): Promise<{ tasks: Task[]; states: JobState[] }> {
  const asked = wanted.filter((w) => w.limit > 0);
  if (finished.length === 0) {
    if (asked.length === 0) return { tasks: [], states: [] };
    // A look that may well find nothing (an idle poll) first reads without taking the write
    // lock (the CLI shares the file); a runner that just got a full batch skips that read.
    const names = asked.map((w) => w.kind.kind);
    if ((options.probe ?? true) && !(await anyDue(deps.db, names, deps.clock.now().toISOString())))
      return { tasks: [], states: [] };
  }
  const { states, tasks, ended } = await inTransaction(
    deps.db,
    async (trx) => {
      const nowMs = deps.clock.now().getTime();
      const states = await recordIn(trx, delaysOf, finished, nowMs);
      const claimed = await claimIn(trx, asked, new Date(nowMs).toISOString());
      return { states, ...claimed };
    },
    claimTransaction,
  );
  finished.forEach((item, index) => {
    const state = states[index]!;
    if (state === 'retry' || state === 'failed') {
      metrics.jobFailures.inc({ kind: item.job.kind, outcome: state });
    }
    item.report(state);
  });
  for (const { kind, jobs } of ended) {
    kind.reportEnded(jobs);
    if (jobs.length > 0)
      metrics.jobFailures.inc({ kind: kind.kind, outcome: 'failed' }, jobs.length);
  }
  return { tasks, states };
}

/**
 * Claims and results run READ COMMITTED on PostgreSQL (no change on SQLite, where the writer
 * lock serialises them). Still correct with several instances at once, because every row they
 * decide on is locked first and re-read as last committed:
 * - a claim reads due jobs FOR UPDATE SKIP LOCKED: a row another instance is claiming or settling
 *   is skipped, a row changed since the statement began is re-checked (pending, due) once locked,
 *   and the lease UPDATE re-checks `status = 'pending'`; the lock is held until commit, so no
 *   two claims lease one job;
 * - a result first locks its job rows FOR UPDATE and checks its lease id (`heldJobs`), so a
 *   job taken over after its lease expired is never written by the late result;
 * - the kinds' hooks write only the rows of the jobs so locked.
 * SERIALIZABLE would add nothing but aborts: claims made at once read the same index range, and
 * its predicate locks make most of them fail and retry.
 */
const claimTransaction: TransactionOptions = { isolation: 'read committed' };

/** Claims up to `limit` due jobs of each kind (`settleAndClaim` with no result to record). */
export async function claimJobs(
  deps: QueueDeps,
  wanted: Wanted,
  options: { probe?: boolean } = {},
): Promise<Task[]> {
  return (await settleAndClaim(deps, () => [], [], wanted, options)).tasks;
}

/** Records results in one transaction (`settleAndClaim` claiming nothing). */
export async function recordResults(
  deps: QueueDeps,
  delaysOf: (kind: string) => readonly number[],
  finished: readonly Finished[],
): Promise<JobState[]> {
  if (finished.length === 0) return [];
  return (await settleAndClaim(deps, delaysOf, finished, [])).states;
}

/** Hands back claims that were never run: attempt uncounted, due at once, if still held. */
export async function releaseTasks(
  deps: QueueDeps,
  kindOf: (kind: string) => RegisteredKind,
  tasks: readonly Task[],
): Promise<void> {
  if (tasks.length === 0) return;
  await inTransaction(
    deps.db,
    async (trx) => {
      const now = deps.clock.now().toISOString();
      for (const task of tasks) await kindOf(task.kind).release(trx, task.job, now);
    },
    claimTransaction,
  );
}

export interface EnqueueInput {
  kind: string;
  maxAttempts: number;
  /** JSON text for a kind without a domain row. */
  payload?: string | null;
  /** Default: now (deps.clock). */
  runAt?: Date;
}

/**
 * Writes a job INSIDE the caller's transaction `trx` (no I/O) and wakes the runners once the
 * transaction is over (see `announceJobs`). Returns the job id, for the domain row that points at it.
 */
export async function enqueue(trx: Db, deps: QueueDeps, input: EnqueueInput): Promise<number> {
  const now = deps.clock.now().toISOString();
  const id = await insertJob(trx, {
    kind: input.kind,
    payload: input.payload ?? null,
    maxAttempts: input.maxAttempts,
    runAt: input.runAt?.toISOString() ?? now,
    now,
  });
  await announceJobs(trx, deps.db, input.kind);
  return id;
}

/**
 * A periodic kind's next run: enqueues (inside `trx`) unless a job of the kind is pending
 * already, so restarts and overlapping schedulers keep one. Returns whether it enqueued. With
 * several instances: start-ups at once run it SERIALIZABLE (`inTransaction`), so one of two that
 * both found none is retried and finds the other's; the run that records the job and enqueues
 * the next holds the job's row, and a start-up reading meanwhile still sees that job pending.
 */
export async function enqueueUnlessPending(
  trx: Db,
  deps: QueueDeps,
  input: EnqueueInput,
): Promise<boolean> {
  if (await hasPendingJob(trx, input.kind)) return false;
  await enqueue(trx, deps, input);
  return true;
}

/**
 * Writes a job already claimed by the caller, which runs it at once (one attempt counted, the
 * lease held for `leaseMs`): no runner takes it unless that lease expires.
 */
export async function enqueueClaimed(
  trx: Db,
  deps: QueueDeps,
  input: Omit<EnqueueInput, 'runAt'> & { leaseMs: number; leaseId: string },
): Promise<ClaimedJob> {
  const nowMs = deps.clock.now().getTime();
  const id = await insertJob(trx, {
    kind: input.kind,
    payload: input.payload ?? null,
    maxAttempts: input.maxAttempts,
    runAt: new Date(nowMs + input.leaseMs).toISOString(),
    now: new Date(nowMs).toISOString(),
    leaseId: input.leaseId,
  });
  return {
    id,
    kind: input.kind,
    payload: input.payload ?? null,
    leaseId: input.leaseId,
    attempt: 1,
    maxAttempts: input.maxAttempts,
    interrupted: false,
  };
}

/** The PostgreSQL channel enqueues notify, with the job's kind as payload. */
export const jobsChannel = 'esign_jobs';

/**
 * In `trx`, where jobs of `kind` were written or made due (`db`: the handle the runners were
 * started with): wakes the runners once the transaction commits. On PostgreSQL every instance's
 * (this one's too) by a notification delivered at commit; on SQLite this process's (another
 * process, the CLI, is found by polling).
 */
export async function announceJobs(trx: Db, db: Db, kind: string): Promise<void> {
  await notify(trx, jobsChannel, kind);
  signalJobWrite(db);
}

/**
 * Wakes a runner when jobs were written: on SQLite by this process (it still polls for others'),
 * on PostgreSQL by any instance (a notification; polling stays the backstop).
 */
const wakers = new WeakMap<object, Set<() => void>>();

export function onJobWrite(db: Db, wake: () => void): () => void {
  let set = wakers.get(db);
  if (!set) {
    set = new Set();
    wakers.set(db, set);
  }
  set.add(wake);
  const unlisten = onNotification(db, jobsChannel, wake);
  return () => {
    set.delete(wake);
    unlisten();
  };
}

/**
 * SQLite: called after jobs were written or made due, possibly inside a transaction still open:
 * the runner's claim waits for the single connection, so it runs after the commit and finds them
 * (or, after a rollback, finds nothing). On PostgreSQL a claim would not wait for the commit:
 * the notification of `announceJobs` wakes the runners instead.
 */
function signalJobWrite(db: Db): void {
  if (dialectOf(db) === 'postgres') return;
  const set = wakers.get(db);
  if (!set || set.size === 0) return;
  setImmediate(() => {
    for (const wake of set) wake();
  });
}
