import { sql } from 'kysely';
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

export interface AttemptOutcome {
  deliveryId: number;
  number: number;
  httpStatus: number | null;
  latencyMs: number | null;
  error: string | null;
  responseBody: string | null;
}

/** Closes attempt rows with their results: one statement for a whole group commit. */
export async function finishAttempts(
  trx: Db,
  attempts: readonly AttemptOutcome[],
  now: string,
): Promise<void> {
  if (attempts.length === 0) return;
  const rows = attempts.map(
    (a) =>
      // Typed: PostgreSQL reads untyped VALUES parameters as text.
      sql`(CAST(${a.deliveryId} AS BIGINT), CAST(${a.number} AS BIGINT), CAST(${a.httpStatus} AS BIGINT), CAST(${a.latencyMs} AS BIGINT), CAST(${a.error} AS TEXT), CAST(${a.responseBody} AS TEXT))`,
  );
  // VALUES names its columns column1, column2, …
  const results = sql<{
    column1: number;
    column2: number;
    column3: number | null;
    column4: number | null;
    column5: string | null;
    column6: string | null;
  }>`(VALUES ${sql.join(rows)})`.as('r');
  await trx
    .updateTable('webhook_attempts')
    .from(results)
    .set((eb) => ({
      finished_at: now,
      http_status: eb.ref('r.column3'),
      latency_ms: eb.ref('r.column4'),
      error: eb.ref('r.column5'),
      response_excerpt: eb.ref('r.column6'),
    }))
    .whereRef('webhook_attempts.delivery_id', '=', 'r.column1')
    .whereRef('webhook_attempts.number', '=', 'r.column2')
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

/** Each delivery's last HTTP status (null: no answer), for a whole group commit. */
export async function setLastHttpStatuses(
  trx: Db,
  statuses: readonly { deliveryId: number; httpStatus: number | null }[],
): Promise<void> {
  if (statuses.length === 0) return;
  const rows = statuses.map(
    (s) => sql`(CAST(${s.deliveryId} AS BIGINT), CAST(${s.httpStatus} AS BIGINT))`,
  );
  const values = sql<{ column1: number; column2: number | null }>`(VALUES ${sql.join(rows)})`.as(
    'v',
  );
  await trx
    .updateTable('webhook_deliveries')
    .from(values)
    .set((eb) => ({ last_http_status: eb.ref('v.column2') }))
    .whereRef('webhook_deliveries.id', '=', 'v.column1')
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
