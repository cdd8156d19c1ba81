import crypto from 'node:crypto';
import type { AppDeps } from '../context';
import { type Db, inTransaction } from '../db/database';
import type { WebhookDeliveryStatus } from '../db/schema';
import type { Logger } from '../platform/logger';
import { retryDelaysMs } from './events';
import type { SealedSecrets } from './subscriptions';

/**
 * The webhook outbox, delivering side (the karakeep liteque pattern on our one connection):
 * - claim: one short BEGIN IMMEDIATE transaction takes due deliveries, counts the attempt, opens
 *   its attempt row and leases the delivery with an allocation id (`lease_id`) until an expiry;
 *   while leased, `next_attempt_at` holds the expiry, so an expired lease is simply due again;
 * - the request is sent outside any transaction;
 * - record: the attempt row gets its result and the delivery moves on (delivered, retry later,
 *   failed) only if it still holds the same allocation id; otherwise another claim took it over
 *   and only the attempt is recorded.
 * An attempt is counted when it is claimed, so a process killed mid-send has used one attempt,
 * and `webhook.test` (one attempt) is never sent twice.
 */

/** Error of an attempt whose process stopped before it recorded a result. */
export const interruptedAttempt = 'interrupted: the lease expired before a result was recorded';

/** A leased delivery with everything needed to send it. */
export interface ClaimedDelivery {
  deliveryId: number;
  leaseId: string;
  attemptNumber: number;
  maxAttempts: number;
  eventId: string;
  eventType: string;
  body: Buffer;
  subscriptionId: string;
  url: string;
  sealed: SealedSecrets;
}

export interface FinishedAttempt {
  delivery: Pick<
    ClaimedDelivery,
    'deliveryId' | 'leaseId' | 'attemptNumber' | 'maxAttempts' | 'eventId'
  >;
  /** What the sender learned (its AttemptResult carries these and more). */
  result: {
    httpStatus: number;
    latencyMs: number;
    success: boolean;
    error: string | null;
    responseBody: string;
  };
}

export type AttemptOutcome = 'delivered' | 'retry' | 'failed' | 'lease_lost';

const iso = (ms: number) => new Date(ms).toISOString();

/** Closes attempt rows a stopped process left open, so every attempt shows an end. */
async function closeInterrupted(trx: Db, deliveryIds: number[], now: string): Promise<void> {
  if (deliveryIds.length === 0) return;
  await trx
    .updateTable('webhook_attempts')
    .set({ finished_at: now, error: interruptedAttempt })
    .where('delivery_id', 'in', deliveryIds)
    .where('finished_at', 'is', null)
    .execute();
}

/**
 * Leases up to `limit` due deliveries for `leaseMs`. Deliveries whose attempts are used up (a
 * process stopped during their last attempt) and deliveries of a disabled subscription are
 * marked failed instead of being handed out.
 */
export async function claimDueDeliveries(
  deps: Pick<AppDeps, 'db' | 'clock' | 'logger'>,
  limit: number,
  leaseMs: number,
): Promise<ClaimedDelivery[]> {
  const ended: { deliveryId: number; eventId: string; attempts: number; reason: string }[] = [];
  const claimed = await inTransaction(deps.db, async (trx) => {
    const nowMs = deps.clock.now().getTime();
    const now = iso(nowMs);
    const due = await trx
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_subscriptions as s', 's.id', 'd.subscription_id')
      .select([
        'd.id',
        'd.event_id',
        'd.subscription_id',
        'd.attempts',
        'd.max_attempts',
        'd.lease_id',
        's.active',
        's.url',
        's.secret_encrypted',
        's.previous_secret_encrypted',
        's.previous_secret_expires_at',
      ])
      .where('d.status', '=', 'pending')
      .where('d.next_attempt_at', '<=', now)
      .orderBy('d.next_attempt_at')
      .orderBy('d.id')
      .limit(limit)
      .execute();
    if (due.length === 0) return [];
    await closeInterrupted(
      trx,
      due.filter((d) => d.lease_id !== null).map((d) => d.id),
      now,
    );

    const ends = due.filter((d) => d.attempts >= d.max_attempts || d.active !== 1);
    for (const d of ends) {
      const reason = d.active !== 1 ? 'subscription disabled' : interruptedAttempt;
      await trx
        .updateTable('webhook_deliveries')
        .set({
          status: 'failed',
          lease_id: null,
          lease_expires_at: null,
          last_error: reason,
          updated_at: now,
          finished_at: now,
        })
        .where('id', '=', d.id)
        .execute();
      ended.push({ deliveryId: d.id, eventId: d.event_id, attempts: d.attempts, reason });
    }
    const sendable = due.filter((d) => !ends.includes(d));
    if (sendable.length === 0) return [];

    const leaseId = crypto.randomUUID();
    const expires = iso(nowMs + leaseMs);
    await trx
      .updateTable('webhook_deliveries')
      .set((eb) => ({
        attempts: eb('attempts', '+', 1),
        lease_id: leaseId,
        lease_expires_at: expires,
        next_attempt_at: expires,
        updated_at: now,
      }))
      .where(
        'id',
        'in',
        sendable.map((d) => d.id),
      )
      .execute();
    await trx
      .insertInto('webhook_attempts')
      .values(
        sendable.map((d) => ({
          delivery_id: d.id,
          number: d.attempts + 1,
          lease_id: leaseId,
          started_at: now,
        })),
      )
      .execute();
    const events = await trx
      .selectFrom('webhook_events')
      .select(['id', 'type', 'body'])
      .where(
        'id',
        'in',
        sendable.map((d) => d.event_id),
      )
      .execute();
    const byId = new Map(events.map((event) => [event.id, event]));
    return sendable.map((d) => {
      const event = byId.get(d.event_id)!;
      return {
        deliveryId: d.id,
        leaseId,
        attemptNumber: d.attempts + 1,
        maxAttempts: d.max_attempts,
        eventId: event.id,
        eventType: event.type,
        body: event.body,
        subscriptionId: d.subscription_id,
        url: d.url,
        sealed: {
          secret_encrypted: d.secret_encrypted,
          previous_secret_encrypted: d.previous_secret_encrypted,
          previous_secret_expires_at: d.previous_secret_expires_at,
        },
      };
    });
  });
  for (const { reason, ...facts } of ended) reportFailure(deps.logger, facts, reason);
  return claimed;
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

/** Where a failed attempt leaves its delivery: the next try's time, or the end. */
function afterFailure(
  attemptNumber: number,
  maxAttempts: number,
  nowMs: number,
): { status: WebhookDeliveryStatus; nextAttemptAt: string } {
  if (attemptNumber >= maxAttempts) return { status: 'failed', nextAttemptAt: iso(nowMs) };
  const delay = retryDelaysMs[Math.min(attemptNumber, retryDelaysMs.length) - 1]!;
  return { status: 'pending', nextAttemptAt: iso(nowMs + delay) };
}

/**
 * Records finished attempts, all in one transaction (a group commit: one fsync for many), and
 * moves each delivery on if it still holds its lease.
 */
export async function recordAttempts(
  deps: Pick<AppDeps, 'db' | 'clock' | 'logger'>,
  finished: readonly FinishedAttempt[],
): Promise<AttemptOutcome[]> {
  const outcomes = await inTransaction(deps.db, async (trx) => {
    const nowMs = deps.clock.now().getTime();
    const now = iso(nowMs);
    const outcomes: AttemptOutcome[] = [];
    for (const { delivery, result } of finished) {
      await trx
        .updateTable('webhook_attempts')
        .set({
          finished_at: now,
          http_status: result.httpStatus,
          latency_ms: result.latencyMs,
          error: result.error,
          response_excerpt: result.responseBody,
        })
        .where('delivery_id', '=', delivery.deliveryId)
        .where('number', '=', delivery.attemptNumber)
        .where('lease_id', '=', delivery.leaseId)
        .execute();
      const next = result.success
        ? { status: 'delivered' as const, nextAttemptAt: now }
        : afterFailure(delivery.attemptNumber, delivery.maxAttempts, nowMs);
      const updated = await trx
        .updateTable('webhook_deliveries')
        .set({
          status: next.status,
          next_attempt_at: next.nextAttemptAt,
          lease_id: null,
          lease_expires_at: null,
          last_http_status: result.httpStatus,
          last_error: result.error,
          updated_at: now,
          finished_at: next.status === 'pending' ? null : now,
        })
        .where('id', '=', delivery.deliveryId)
        .where('lease_id', '=', delivery.leaseId)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (updated.numUpdatedRows === 0n) {
        outcomes.push('lease_lost');
        continue;
      }
      outcomes.push(
        next.status === 'delivered' ? 'delivered' : next.status === 'failed' ? 'failed' : 'retry',
      );
    }
    return outcomes;
  });
  outcomes.forEach((outcome, index) => {
    const { delivery, result } = finished[index]!;
    if (outcome === 'failed') {
      reportFailure(
        deps.logger,
        {
          deliveryId: delivery.deliveryId,
          eventId: delivery.eventId,
          attempts: delivery.attemptNumber,
        },
        result.error,
      );
    } else if (outcome === 'lease_lost') {
      deps.logger.warn(
        { deliveryId: delivery.deliveryId, eventId: delivery.eventId },
        'webhook attempt finished after its lease was taken over; only the attempt was recorded',
      );
    }
  });
  return outcomes;
}

/**
 * Hands back claims that were never sent (a worker stopping): the attempt is uncounted and its
 * row removed, and the delivery is due at once, if it still holds the same lease.
 */
export async function releaseClaims(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  claims: readonly Pick<ClaimedDelivery, 'deliveryId' | 'leaseId' | 'attemptNumber'>[],
): Promise<void> {
  if (claims.length === 0) return;
  await inTransaction(deps.db, async (trx) => {
    const now = deps.clock.now().toISOString();
    for (const claim of claims) {
      const released = await trx
        .updateTable('webhook_deliveries')
        .set((eb) => ({
          attempts: eb('attempts', '-', 1),
          lease_id: null,
          lease_expires_at: null,
          next_attempt_at: now,
          updated_at: now,
        }))
        .where('id', '=', claim.deliveryId)
        .where('lease_id', '=', claim.leaseId)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (released.numUpdatedRows === 0n) continue;
      await trx
        .deleteFrom('webhook_attempts')
        .where('delivery_id', '=', claim.deliveryId)
        .where('number', '=', claim.attemptNumber)
        .where('lease_id', '=', claim.leaseId)
        .execute();
    }
  });
}

/** One `webhook.test` event for one subscription, ready to be written and sent at once. */
export interface TestEventRow {
  eventId: string;
  tenantId: number;
  organizationId: number;
  subscriptionId: string;
  url: string;
  body: Buffer;
  createdAt: string;
}

/**
 * Writes `webhook.test` events already leased by the caller (endpoint 17 sends them itself,
 * synchronously): one attempt allowed and already counted, so no worker ever sends them, not even
 * after a crash (the expired lease finds the attempts used up and marks the delivery failed).
 */
export function leaseTestDeliveries(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  rows: readonly TestEventRow[],
  leaseMs: number,
): Promise<ClaimedDelivery[]> {
  return inTransaction(deps.db, async (trx) => {
    const nowMs = deps.clock.now().getTime();
    const now = iso(nowMs);
    const expires = iso(nowMs + leaseMs);
    const leaseId = crypto.randomUUID();
    const claimed: ClaimedDelivery[] = [];
    for (const row of rows) {
      await trx
        .insertInto('webhook_events')
        .values({
          id: row.eventId,
          tenant_id: row.tenantId,
          organization_id: row.organizationId,
          type: 'webhook.test',
          body: row.body,
          created_at: row.createdAt,
        })
        .execute();
      const delivery = await trx
        .insertInto('webhook_deliveries')
        .values({
          event_id: row.eventId,
          subscription_id: row.subscriptionId,
          tenant_id: row.tenantId,
          status: 'pending',
          attempts: 1,
          max_attempts: 1,
          next_attempt_at: expires,
          lease_id: leaseId,
          lease_expires_at: expires,
          created_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await trx
        .insertInto('webhook_attempts')
        .values({ delivery_id: delivery.id, number: 1, lease_id: leaseId, started_at: now })
        .execute();
      const sealed = await trx
        .selectFrom('webhook_subscriptions')
        .select(['secret_encrypted', 'previous_secret_encrypted', 'previous_secret_expires_at'])
        .where('id', '=', row.subscriptionId)
        .executeTakeFirstOrThrow();
      claimed.push({
        deliveryId: delivery.id,
        leaseId,
        attemptNumber: 1,
        maxAttempts: 1,
        eventId: row.eventId,
        eventType: 'webhook.test',
        body: row.body,
        subscriptionId: row.subscriptionId,
        url: row.url,
        sealed,
      });
    }
    return claimed;
  });
}
