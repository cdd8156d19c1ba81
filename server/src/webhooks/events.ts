import crypto from 'node:crypto';
import { canonicalJsonBytes } from '@esign/shared';
import type { AppDeps } from '../context';
import type { Db } from '../db/database';
import { enqueue } from '../jobs/queue';
import { insertDelivery, insertEvent } from './queries/outbox';
import { activeSubscriptions, subscribedEventsOf } from './queries/subscriptions';
import { type SubscribableEvent, subscribableEvents } from './subscriptions';

/**
 * The webhook outbox, writing side. `enqueueEvent` runs inside the caller's transaction, next to
 * the state change it reports: the event row, its deliveries and their jobs commit or roll back
 * with it.
 * The body is the canonical JSON of the envelope (compact, keys sorted, `&` literal), produced
 * here once; the worker sends exactly these bytes on every attempt.
 */

/** Every event type the service sends. */
export type WebhookEventType = SubscribableEvent | 'webhook.test';

/** Spec "Delivery rules": six attempts; the waits after failures 1 to 5. */
export const maxAttemptsPerEvent = 6;
export const retryDelaysMs = [1_000, 10_000, 60_000, 600_000, 3_600_000] as const;

/** The job kind that sends one event to one subscription. */
export const webhookJobKind = 'webhook.delivery';

/** `evt_<uuid>`, or `evt_test_<uuid>` for `webhook.test`. */
export function newEventId(type: WebhookEventType): string {
  return `${type === 'webhook.test' ? 'evt_test_' : 'evt_'}${crypto.randomUUID()}`;
}

/** The envelope of document 1 ("Envelope") as the bytes that are stored, signed and sent. */
export function envelopeBytes(
  id: string,
  type: WebhookEventType,
  createdAt: string,
  data: object,
): Buffer {
  return canonicalJsonBytes({ id, type, createdAt, data });
}

/** Whether a subscription's event list (the stored JSON array) takes events of `type`. */
export function subscriptionListens(events: string, type: SubscribableEvent): boolean {
  return subscribedEventsOf({ events }).includes(type);
}

/** Active subscriptions of an organization whose event list has `type`, oldest first. */
export async function listeningSubscriptions(
  db: Db,
  organizationId: number,
  type: SubscribableEvent,
): Promise<{ id: string }[]> {
  const subscriptions = await activeSubscriptions(db, organizationId);
  return subscriptions.filter((s) => subscriptionListens(s.events, type));
}

export interface EnqueueEventInput {
  tenantId: number;
  /** The organization of the dossier: its active subscriptions receive the event. */
  organizationId: number;
  type: SubscribableEvent;
  /** From `documentCompletedData`, `documentRejectedData` or `notificationData`. */
  data: object;
}

export interface EnqueuedEvent {
  /** `evt_<uuid>`; null when no active subscription listens, and then nothing is stored. */
  eventId: string | null;
  /** One per matching subscription (fan-out). */
  deliveries: number;
}

/**
 * Puts one event in the outbox INSIDE the caller's transaction `trx` (no I/O): the envelope
 * `{id, type, createdAt, data}` serialized once, and one pending delivery, due now, for every
 * active subscription of the organization whose event list has `type` (`document.*` are in a
 * subscription's list by default, `notification.*` only when the administrator listed them).
 * A `data` value JSON cannot carry (NaN, a Map, a cycle) throws, so the caller's transaction
 * rolls back rather than sending something else than what was meant.
 *
 * @example
 * await inTransaction(deps.db, async (trx) => {
 *   await markDossierCompleted(trx, dossier);
 *   await enqueueEvent(trx, deps, {
 *     tenantId, organizationId, type: 'document.completed',
 *     data: documentCompletedData({ ...dossierFacts, completedAt }),
 *   });
 * });
 */
export async function enqueueEvent(
  trx: Db,
  deps: Pick<AppDeps, 'clock' | 'db'>,
  input: EnqueueEventInput,
): Promise<EnqueuedEvent> {
  if (!(subscribableEvents as readonly string[]).includes(input.type)) {
    throw new TypeError(`enqueueEvent: unknown event type ${String(input.type)}`);
  }
  const receivers = await listeningSubscriptions(trx, input.organizationId, input.type);
  if (receivers.length === 0) return { eventId: null, deliveries: 0 };

  const createdAt = deps.clock.now().toISOString();
  const id = newEventId(input.type);
  await insertEvent(trx, {
    id,
    tenantId: input.tenantId,
    organizationId: input.organizationId,
    type: input.type,
    body: envelopeBytes(id, input.type, createdAt, input.data),
    createdAt,
  });
  for (const subscription of receivers) {
    const jobId = await enqueue(trx, deps, {
      kind: webhookJobKind,
      maxAttempts: maxAttemptsPerEvent,
    });
    await insertDelivery(trx, {
      eventId: id,
      subscriptionId: subscription.id,
      tenantId: input.tenantId,
      jobId,
      createdAt,
    });
  }
  return { eventId: id, deliveries: receivers.length };
}
