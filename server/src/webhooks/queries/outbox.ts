import type { Db } from '../../db/database';

/**
 * The webhook outbox's own SQL: events and their deliveries (one per subscription, each pointing
 * at the job that sends it) and the attempt rows. Queue state is the jobs module's.
 */

export interface EventRow {
  id: string;
  tenantId: number;
  organizationId: number;
  type: string;
  body: Buffer;
  createdAt: string;
}

export async function insertEvent(trx: Db, event: EventRow): Promise<void> {
  await trx
    .insertInto('webhook_events')
    .values({
      id: event.id,
      tenant_id: event.tenantId,
      organization_id: event.organizationId,
      type: event.type,
      body: event.body,
      created_at: event.createdAt,
    })
    .execute();
}

export async function insertDelivery(
  trx: Db,
  delivery: {
    eventId: string;
    subscriptionId: string;
    tenantId: number;
    jobId: number;
    createdAt: string;
  },
): Promise<number> {
  const row = await trx
    .insertInto('webhook_deliveries')
    .values({
      event_id: delivery.eventId,
      subscription_id: delivery.subscriptionId,
      tenant_id: delivery.tenantId,
      job_id: delivery.jobId,
      created_at: delivery.createdAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** What sending the deliveries of these jobs needs: event bytes, receiver, sealed secrets. */
export function deliveriesOfJobs(trx: Db, jobIds: readonly number[]) {
  return trx
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_subscriptions as s', 's.id', 'd.subscription_id')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .select([
      'd.id',
      'd.job_id',
      'd.event_id',
      'd.subscription_id',
      'e.type',
      'e.body',
      's.active',
      's.url',
      's.secret_encrypted',
      's.previous_secret_encrypted',
      's.previous_secret_expires_at',
    ])
    .where('d.job_id', 'in', jobIds)
    .execute();
}

/** Delivery and event ids of jobs (for reports). */
export function deliveryIdsOfJobs(trx: Db, jobIds: readonly number[]) {
  return trx
    .selectFrom('webhook_deliveries')
    .select(['id', 'job_id', 'event_id'])
    .where('job_id', 'in', jobIds)
    .execute();
}

/** Closes attempt rows a stopped process left open, so every attempt shows an end. */
export async function closeOpenAttempts(
  trx: Db,
  jobIds: readonly number[],
  error: string,
  now: string,
): Promise<void> {
  if (jobIds.length === 0) return;
  await trx
    .updateTable('webhook_attempts')
    .set({ finished_at: now, error })
    .where('delivery_id', 'in', (eb) =>
      eb.selectFrom('webhook_deliveries').select('id').where('job_id', 'in', jobIds),
    )
    .where('finished_at', 'is', null)
    .execute();
}

export async function openAttempts(
  trx: Db,
  attempts: readonly { deliveryId: number; number: number }[],
  now: string,
): Promise<void> {
  if (attempts.length === 0) return;
  await trx
    .insertInto('webhook_attempts')
    .values(attempts.map((a) => ({ delivery_id: a.deliveryId, number: a.number, started_at: now })))
    .execute();
}

export async function finishAttempt(
  trx: Db,
  attempt: { deliveryId: number; number: number },
  result: {
    httpStatus: number | null;
    latencyMs: number | null;
    error: string | null;
    responseBody: string | null;
  },
  now: string,
): Promise<void> {
  await trx
    .updateTable('webhook_attempts')
    .set({
      finished_at: now,
      http_status: result.httpStatus,
      latency_ms: result.latencyMs,
      error: result.error,
      response_excerpt: result.responseBody,
    })
    .where('delivery_id', '=', attempt.deliveryId)
    .where('number', '=', attempt.number)
    .execute();
}

export async function deleteAttempt(
  trx: Db,
  attempt: { deliveryId: number; number: number },
): Promise<void> {
  await trx
    .deleteFrom('webhook_attempts')
    .where('delivery_id', '=', attempt.deliveryId)
    .where('number', '=', attempt.number)
    .execute();
}

export async function setLastHttpStatus(
  trx: Db,
  deliveryId: number,
  httpStatus: number | null,
): Promise<void> {
  await trx
    .updateTable('webhook_deliveries')
    .set({ last_http_status: httpStatus })
    .where('id', '=', deliveryId)
    .execute();
}

/** The organization and tenant codes named in a `webhook.test` payload. */
export function organizationCodes(db: Db, organizationId: number) {
  return db
    .selectFrom('organizations')
    .innerJoin('tenants', 'tenants.id', 'organizations.tenant_id')
    .select(['organizations.code as organizationCode', 'tenants.code as tenantCode'])
    .where('organizations.id', '=', organizationId)
    .executeTakeFirstOrThrow();
}
