import type { AppDeps } from '../context';
import type { ClaimedJob, JobKind, Prepared, Recorded } from '../jobs/queue';
import type { Logger } from '../platform/logger';
import { retryDelaysMs, webhookJobKind } from './events';
import {
  closeOpenAttempts,
  deleteAttempt,
  deliveriesOfJobs,
  deliveryIdsOfJobs,
  finishAttempts,
  openAttempts,
  setLastHttpStatuses,
} from './queries/outbox';
import { type AttemptResult, type SendOptions, sendClaimed } from './sender';
import type { SealedSecrets } from './subscriptions';

/**
 * Webhook deliveries as a job kind of the one queue (jobs/). What the kind adds to the queue's
 * claim, record and release:
 * - claim: the delivery's event bytes and receiver are loaded, its attempt row is opened (number =
 *   the job's attempt), and attempt rows a stopped process left open are closed as interrupted;
 *   a delivery of a disabled subscription ends failed without an attempt;
 * - record: the attempt row gets its result, and the delivery its last HTTP status when the
 *   claim still held the job (otherwise only the attempt is recorded);
 * - release: the attempt row of a claim handed back is removed.
 * An attempt is counted when it is claimed, so a process killed mid-send has used one attempt,
 * and `webhook.test` (one attempt) is never sent twice.
 */

/** Error of an attempt whose process stopped before it recorded a result. */
export const interruptedAttempt = 'interrupted: the lease expired before a result was recorded';

/** A claimed delivery with everything needed to send it. */
export interface DeliveryWork {
  deliveryId: number;
  eventId: string;
  eventType: string;
  body: Buffer;
  subscriptionId: string;
  url: string;
  sealed: SealedSecrets;
}

function reportFailure(
  logger: Logger,
  facts: { deliveryId: number; eventId: string; attempts: number },
  lastError: string | null,
): void {
  const fields = { ...facts, lastError };
  // webhook.test is sent once by design; its failure is the caller's answer, not an incident.
  if (facts.eventId.startsWith('evt_test_')) logger.info(fields, 'webhook test not delivered');
  else logger.error(fields, 'webhook delivery failed: every attempt used');
}

export interface WebhookKindOptions {
  concurrency: number;
  leaseMs: number;
  send: SendOptions;
}

/** The webhook delivery kind: the spec's schedule (1 s, 10 s, 1 min, 10 min, 1 h). */
export function webhookDeliveryKind(
  deps: Pick<AppDeps, 'config' | 'clock' | 'secrets' | 'logger'>,
  options: WebhookKindOptions,
): JobKind<DeliveryWork, AttemptResult> {
  const { logger } = deps;
  /** Facts of jobs ended at claim, read in the claim transaction and logged after it. */
  const endedFacts = new Map<number, { deliveryId: number; eventId: string }>();
  return {
    kind: webhookJobKind,
    concurrency: options.concurrency,
    leaseMs: options.leaseMs,
    retryDelaysMs,
    interruptedError: interruptedAttempt,

    async prepare(trx, jobs, now) {
      const ids = jobs.map((job) => job.id);
      const interrupted = jobs.filter((job) => job.interrupted).map((job) => job.id);
      await closeOpenAttempts(trx, interrupted, interruptedAttempt, now);
      const rows = new Map((await deliveriesOfJobs(trx, ids)).map((row) => [row.job_id, row]));
      const prepared = jobs.map((job): Prepared<DeliveryWork> => {
        const row = rows.get(job.id);
        if (!row) return { fail: 'no delivery row for this job' };
        if (row.active !== 1) return { fail: 'subscription disabled' };
        return {
          work: {
            deliveryId: row.id,
            eventId: row.event_id,
            eventType: row.type,
            body: row.body,
            subscriptionId: row.subscription_id,
            url: row.url,
            sealed: {
              secret_encrypted: row.secret_encrypted,
              previous_secret_encrypted: row.previous_secret_encrypted,
              previous_secret_expires_at: row.previous_secret_expires_at,
            },
          },
        };
      });
      await openAttempts(
        trx,
        prepared.flatMap((p, index) =>
          'work' in p ? [{ deliveryId: p.work.deliveryId, number: jobs[index]!.attempt }] : [],
        ),
        now,
      );
      return prepared;
    },

    run: (work) => sendClaimed(deps, work, options.send),

    errorOf: (result) => (result.success ? null : (result.error ?? 'failed')),

    async record(trx, recorded, now) {
      const answered = ({ result }: Recorded<DeliveryWork, AttemptResult>) =>
        result?.httpStatus ?? null;
      await finishAttempts(
        trx,
        recorded.map((entry) => ({
          deliveryId: entry.work.deliveryId,
          number: entry.job.attempt,
          httpStatus: answered(entry),
          latencyMs: entry.result?.latencyMs ?? null,
          error: entry.error,
          responseBody: entry.result?.responseBody ?? null,
        })),
        now,
      );
      // A result whose claim no longer held the job records only its attempt.
      await setLastHttpStatuses(
        trx,
        recorded
          .filter((entry) => entry.state !== 'lease_lost')
          .map((entry) => ({ deliveryId: entry.work.deliveryId, httpStatus: answered(entry) })),
      );
    },

    async ended(trx, jobs, now) {
      const ids = jobs.map((job) => job.id);
      await closeOpenAttempts(
        trx,
        jobs.filter((job) => job.interrupted).map((job) => job.id),
        interruptedAttempt,
        now,
      );
      for (const row of await deliveryIdsOfJobs(trx, ids)) {
        endedFacts.set(row.job_id, { deliveryId: row.id, eventId: row.event_id });
      }
    },

    reportEnded(jobs) {
      for (const job of jobs) {
        const facts = endedFacts.get(job.id);
        endedFacts.delete(job.id);
        if (facts) reportFailure(logger, { ...facts, attempts: job.attempts }, job.error);
      }
    },

    reportRecorded({ job, work, error, state }: Recorded<DeliveryWork, AttemptResult>) {
      const facts = { deliveryId: work.deliveryId, eventId: work.eventId };
      if (state === 'failed') reportFailure(logger, { ...facts, attempts: job.attempt }, error);
      else if (state === 'lease_lost') {
        logger.warn(
          facts,
          'webhook attempt finished after its lease was taken over; only the attempt was recorded',
        );
      }
    },

    async released(trx, job: ClaimedJob) {
      const [row] = await deliveryIdsOfJobs(trx, [job.id]);
      if (row) await deleteAttempt(trx, { deliveryId: row.id, number: job.attempt });
    },

    close: () => options.send.pool?.close(),
  };
}
