import crypto from 'node:crypto';
import type { AppDeps } from '../context';
import { type Db, inTransaction } from '../db/database';
import type { WebhookDeliveryStatus } from '../db/schema';
import { ApiError } from '../errors/apiError';
import { signalOutboxWrite } from './events';

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

function deliveryQuery(db: Db) {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .innerJoin('webhook_subscriptions as s', 's.id', 'd.subscription_id')
    .innerJoin('tenants as t', 't.id', 'd.tenant_id')
    .select([
      'd.id',
      'd.event_id',
      'e.type',
      't.code as tenant_code',
      'd.subscription_id',
      's.url',
      'd.status',
      'd.attempts',
      'd.max_attempts',
      'd.next_attempt_at',
      'd.lease_id',
      'd.last_http_status',
      'd.last_error',
      'd.created_at',
      'd.finished_at',
    ]);
}

type DeliveryRow = Awaited<ReturnType<ReturnType<typeof deliveryQuery>['executeTakeFirstOrThrow']>>;

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
    nextAttemptAt: row.status === 'pending' ? row.next_attempt_at : null,
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
  let query = deliveryQuery(db).orderBy('d.id', 'desc').limit(filter.limit);
  if (filter.tenantId !== undefined) query = query.where('d.tenant_id', '=', filter.tenantId);
  if (filter.status !== undefined) query = query.where('d.status', '=', filter.status);
  return (await query.execute()).map(view);
}

function deliveryNotFound(id: number): ApiError {
  return new ApiError(404, 'WEBHOOK_DELIVERY_NOT_FOUND', `No webhook delivery ${id}`);
}

/** One delivery with every attempt. */
export async function deliveryDetail(db: Db, id: number): Promise<DeliveryDetail> {
  const row = await deliveryQuery(db).select('e.body').where('d.id', '=', id).executeTakeFirst();
  if (!row) throw deliveryNotFound(id);
  const attempts = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', '=', id)
    .orderBy('number')
    .execute();
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
    const row = await trx
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_subscriptions as s', 's.id', 'd.subscription_id')
      .select([
        'd.status',
        'd.event_id',
        'd.attempts',
        'd.lease_id',
        'd.next_attempt_at',
        's.active',
      ])
      .where('d.id', '=', id)
      .executeTakeFirst();
    if (!row) throw deliveryNotFound(id);
    const now = deps.clock.now().toISOString();
    if (row.event_id.startsWith('evt_test_')) {
      throw new ApiError(
        409,
        'WEBHOOK_TEST_NOT_REDELIVERABLE',
        'webhook.test is sent once; call the test endpoint again instead',
      );
    }
    if (row.active !== 1) {
      throw new ApiError(
        409,
        'WEBHOOK_SUBSCRIPTION_DISABLED',
        'The subscription of this delivery is disabled',
      );
    }
    if (row.status === 'pending' && row.lease_id !== null && row.next_attempt_at > now) {
      throw new ApiError(
        409,
        'WEBHOOK_DELIVERY_IN_FLIGHT',
        `Delivery ${id} is being sent right now; look again in a few seconds`,
      );
    }
    await trx
      .updateTable('webhook_deliveries')
      .set(
        row.status === 'pending'
          ? { next_attempt_at: now, updated_at: now }
          : {
              status: 'pending',
              max_attempts: row.attempts + 1,
              next_attempt_at: now,
              finished_at: null,
              updated_at: now,
            },
      )
      .where('id', '=', id)
      .execute();
    signalOutboxWrite(deps.db);
    return { id, previousStatus: row.status, nextAttemptAt: now };
  });
}
