import crypto from 'node:crypto';
import type { AppDeps } from '../context';
import { type Db, inTransaction } from '../db/database';
import type { WebhookDeliveryStatus } from '../db/schema';
import { DomainError } from '../errors/domainError';
import { jobById, rescheduleJob } from '../jobs/queries';
import { announceJobs } from '../jobs/queue';
import {
  attemptsOf,
  type DeliveryRow,
  deliveryRows,
  deliveryWithBody,
  redeliveryFacts,
  statusOf,
} from './queries/deliveries';

/** The operator's view of the outbox: list, show one with its attempts, redeliver by hand. */

export const deliveryStatuses: readonly WebhookDeliveryStatus[] = [
  'pending',
  'delivered',
  'failed',
];

export interface DeliveryView {
  id: number;
  eventId: string;
  eventType: string;
  tenantCode: string;
  subscriptionId: string;
  url: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  maxAttempts: number;
  /** Due time of the next attempt (the lease expiry while one is in flight); null when finished. */
  nextAttemptAt: string | null;
  inFlight: boolean;
  lastHttpStatus: number | null;
  lastError: string | null;
  createdAt: string;
  finishedAt: string | null;
}

export interface AttemptView {
  number: number;
  startedAt: string;
  finishedAt: string | null;
  /** 0: no connection or no answer in time; null: no result recorded (interrupted). */
  httpStatus: number | null;
  latencyMs: number | null;
  error: string | null;
  responseExcerpt: string | null;
}

export interface DeliveryDetail extends DeliveryView {
  bodyBytes: number;
  /** sha256 hex of the body: equal on every attempt, for comparing with what a receiver got. */
  bodySha256: string;
  attemptList: AttemptView[];
}

function view(row: DeliveryRow): DeliveryView {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.type,
    tenantCode: row.tenant_code,
    subscriptionId: row.subscription_id,
    url: row.url,
    status: row.status,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    nextAttemptAt: row.status === 'pending' ? row.run_at : null,
    inFlight: row.status === 'pending' && row.lease_id !== null,
    lastHttpStatus: row.last_http_status,
    lastError: row.last_error,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
  };
}

/** Deliveries, newest first. */
export async function listDeliveries(
  db: Db,
  filter: {
    tenantId?: number | undefined;
    status?: WebhookDeliveryStatus | undefined;
    limit: number;
  },
): Promise<DeliveryView[]> {
  return (await deliveryRows(db, filter)).map(view);
}

function deliveryNotFound(id: number): DomainError {
  return new DomainError('WEBHOOK_DELIVERY_NOT_FOUND', `No webhook delivery ${id}`);
}

/** One delivery with every attempt. */
export async function deliveryDetail(db: Db, id: number): Promise<DeliveryDetail> {
  const row = await deliveryWithBody(db, id);
  if (!row) throw deliveryNotFound(id);
  const attempts = await attemptsOf(db, id);
  return {
    ...view(row),
    bodyBytes: row.body.length,
    bodySha256: crypto.createHash('sha256').update(row.body).digest('hex'),
    attemptList: attempts.map((a) => ({
      number: a.number,
      startedAt: a.started_at,
      finishedAt: a.finished_at,
      httpStatus: a.http_status,
      latencyMs: a.latency_ms,
      error: a.error,
      responseExcerpt: a.response_excerpt,
    })),
  };
}

/**
 * Sends a delivery again, now, with the same event id and bytes. A finished delivery (delivered
 * or failed) gets one more attempt; a pending one waiting for its next retry is moved to now.
 * Refused: a delivery in flight, a `webhook.test` (sent once by rule), a disabled subscription.
 */
export function redeliver(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  id: number,
): Promise<{ id: number; previousStatus: WebhookDeliveryStatus; nextAttemptAt: string }> {
  return inTransaction(deps.db, async (trx) => {
    const row = await redeliveryFacts(trx, id);
    const job = row && (await jobById(trx, row.job_id));
    if (!row || !job) throw deliveryNotFound(id);
    const now = deps.clock.now().toISOString();
    if (row.event_id.startsWith('evt_test_')) {
      throw new DomainError(
        'WEBHOOK_TEST_NOT_REDELIVERABLE',
        'webhook.test is sent once; call the test endpoint again instead',
      );
    }
    if (row.active !== 1) {
      throw new DomainError(
        'WEBHOOK_SUBSCRIPTION_DISABLED',
        'The subscription of this delivery is disabled',
      );
    }
    if (job.status === 'pending' && job.lease_id !== null && job.run_at > now) {
      throw new DomainError(
        'WEBHOOK_DELIVERY_IN_FLIGHT',
        `Delivery ${id} is being sent right now; look again in a few seconds`,
      );
    }
    await rescheduleJob(
      trx,
      job.id,
      job.status === 'pending' ? { now } : { now, maxAttempts: job.attempts + 1 },
    );
    await announceJobs(trx, deps.db, job.kind);
    return { id, previousStatus: statusOf(job.status), nextAttemptAt: now };
  });
}
