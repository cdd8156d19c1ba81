import { inTransaction } from '../../src/db/database';
import {
  type ClaimedJob,
  enqueue,
  type JobKind,
  type RegisteredKind,
  registerKind,
} from '../../src/jobs/queue';
import type { Harness } from '../support/harness';

/**
 * A job kind for the queue's own tests: its work is the job's JSON payload (one with `refuse`
 * ends failed at claim with that reason), its handler is whatever the test passes, and every
 * hook call is noted.
 */

export interface Noted {
  kind: string;
  prepared: number[];
  recorded: { id: number; state: string; error: string | null; trx: object }[];
  ended: { id: number; error: string }[];
  released: number[];
}

export interface TestKindOptions {
  kind?: string;
  concurrency?: number;
  leaseMs?: number;
  retryDelaysMs?: number[];
  /** 'ok' is a success, any other text the failure's error. */
  run?: (payload: unknown, job: ClaimedJob) => Promise<string>;
}

export function testKind(options: TestKindOptions = {}): {
  kind: RegisteredKind;
  spec: JobKind<unknown, string>;
  noted: Noted;
} {
  const name = options.kind ?? 'test.echo';
  const noted: Noted = { kind: name, prepared: [], recorded: [], ended: [], released: [] };
  const spec: JobKind<unknown, string> = {
    kind: name,
    concurrency: options.concurrency ?? 4,
    leaseMs: options.leaseMs ?? 30_000,
    retryDelaysMs: options.retryDelaysMs ?? [1_000],
    interruptedError: 'interrupted',
    async prepare(_trx, jobs) {
      noted.prepared.push(...jobs.map((job) => job.id));
      return jobs.map((job) => {
        const payload = JSON.parse(job.payload ?? 'null') as { refuse?: string } | null;
        return payload?.refuse ? { fail: payload.refuse } : { work: payload };
      });
    },
    run: (payload, job) => (options.run ? options.run(payload, job) : Promise.resolve('ok')),
    errorOf: (result) => (result === 'ok' ? null : result),
    async record(trx, recorded) {
      for (const { job, state, error } of recorded) {
        noted.recorded.push({ id: job.id, state, error, trx });
      }
    },
    async ended(_trx, jobs) {
      noted.ended.push(...jobs.map((job) => ({ id: job.id, error: job.error })));
    },
    async released(_trx, job) {
      noted.released.push(job.id);
    },
  };
  return { kind: registerKind(spec), spec, noted };
}

/** Enqueues jobs of `kind` in one transaction; returns their ids. */
export function enqueueJobs(
  h: Harness,
  kind: string,
  payloads: unknown[],
  maxAttempts = 3,
): Promise<number[]> {
  return inTransaction(h.deps.db, async (trx) => {
    const ids: number[] = [];
    for (const payload of payloads) {
      ids.push(await enqueue(trx, h.deps, { kind, maxAttempts, payload: JSON.stringify(payload) }));
    }
    return ids;
  });
}

export function jobRow(h: Harness, id: number) {
  return h.deps.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** A promise and its resolver, for handlers the test lets finish. */
export function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open: (value: T) => void = () => {};
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
