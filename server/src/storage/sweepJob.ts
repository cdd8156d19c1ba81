import { type Db, inTransaction } from '../db/database';
import { enqueueUnlessPending, type RegisteredKind, registerKind } from '../jobs/queue';
import type { Logger } from '../platform/logger';
import { type SweepDeps, type SweepReport, sweepFileStore } from './sweep';

/**
 * The daily sweep as a job kind of the one queue: each run, whatever its outcome, enqueues the
 * next one a day later in the transaction that records it, so exactly one sweep job is pending
 * and a restart neither loses nor doubles the schedule. main.ts enqueues the first (due at once)
 * when none is pending.
 */

export const storageSweepKind = 'storage.sweep';

const dayMs = 86_400_000;
const maxAttempts = 3;

export type SweepJobDeps = SweepDeps & { logger: Logger };

export interface SweepJobOptions {
  /** Between one run's end and the next run. Default a day. */
  intervalMs?: number;
}

export function storageSweepJob(deps: SweepJobDeps, options: SweepJobOptions = {}): RegisteredKind {
  const intervalMs = options.intervalMs ?? dayMs;
  const logger = deps.logger.child({ component: 'storage-sweep' });
  const scheduleNext = (trx: Db, now: string) =>
    enqueueUnlessPending(trx, deps, {
      kind: storageSweepKind,
      maxAttempts,
      runAt: new Date(Date.parse(now) + intervalMs),
    });
  return registerKind<null, SweepReport>({
    kind: storageSweepKind,
    concurrency: 1,
    // A stat per stored file: minutes for a large store, never an hour.
    leaseMs: 60 * 60_000,
    retryDelaysMs: [10 * 60_000, 60 * 60_000],
    interruptedError: 'the sweep was interrupted (lease expired)',
    prepare: (_trx, jobs) => Promise.resolve(jobs.map(() => ({ work: null }))),
    run: () => sweepFileStore(deps, { dryRun: false }),
    errorOf: () => null,
    async record(trx, recorded, now) {
      if (recorded.some(({ state }) => state === 'done' || state === 'failed')) {
        await scheduleNext(trx, now);
      }
    },
    async ended(trx, _jobs, now) {
      await scheduleNext(trx, now);
    },
    reportRecorded({ result, error, state }) {
      if (result) {
        const { deletedFiles: _listed, ...counts } = result;
        logger.info(counts, 'file store swept');
      } else logger.error({ error, state }, 'file store sweep failed');
    },
    reportEnded(jobs) {
      logger.error({ jobs: jobs.map((job) => job.id) }, 'file store sweep ended without running');
    },
  });
}

/** Enqueues a sweep due now unless one is pending (the first start, or after a lost job). */
export function scheduleStorageSweep(deps: Pick<SweepDeps, 'db' | 'clock'>): Promise<boolean> {
  return inTransaction(deps.db, (trx) =>
    enqueueUnlessPending(trx, deps, { kind: storageSweepKind, maxAttempts }),
  );
}
