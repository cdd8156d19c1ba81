import type { Db } from '../../db/database';
import type { JobStatus, WebhookDeliveryStatus } from '../../db/schema';

/**
 * The operator's reads of the outbox: a delivery with its event, subscription, tenant and the
 * state of its job (a job that is done is a delivered delivery).
 */

const statusOfJob = { pending: 'pending', done: 'delivered', failed: 'failed' } as const;
const jobStatusOf = { pending: 'pending', delivered: 'done', failed: 'failed' } as const;

function deliveryQuery(db: Db) {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('jobs as j', 'j.id', 'd.job_id')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .innerJoin('webhook_subscriptions as s', 's.id', 'd.subscription_id')
    .innerJoin('tenants as t', 't.id', 'd.tenant_id')
    .select([
      'd.id',
      'd.job_id',
      'd.event_id',
      'e.type',
      't.code as tenant_code',
      'd.subscription_id',
      's.url',
      'j.status as job_status',
      'j.attempts',
      'j.max_attempts',
      'j.run_at',
      'j.lease_id',
      'd.last_http_status',
      'j.last_error',
      'd.created_at',
      'j.finished_at',
    ]);
}

type Row = Awaited<ReturnType<ReturnType<typeof deliveryQuery>['executeTakeFirstOrThrow']>>;
export type DeliveryRow = Omit<Row, 'job_status'> & { status: WebhookDeliveryStatus };

/** A delivery's status from its job's. */
export const statusOf = (status: JobStatus): WebhookDeliveryStatus => statusOfJob[status];

function withStatus({ job_status, ...row }: Row): DeliveryRow {
  return { ...row, status: statusOf(job_status) };
}

/** Deliveries, newest first. */
export async function deliveryRows(
  db: Db,
  filter: {
    tenantId?: number | undefined;
    status?: WebhookDeliveryStatus | undefined;
    limit: number;
  },
): Promise<DeliveryRow[]> {
  let query = deliveryQuery(db).orderBy('d.id', 'desc').limit(filter.limit);
  if (filter.tenantId !== undefined) query = query.where('d.tenant_id', '=', filter.tenantId);
  if (filter.status !== undefined) query = query.where('j.status', '=', jobStatusOf[filter.status]);
  return (await query.execute()).map(withStatus);
}

export async function deliveryWithBody(
  db: Db,
  id: number,
): Promise<(DeliveryRow & { body: Buffer }) | undefined> {
  const row = await deliveryQuery(db).select('e.body').where('d.id', '=', id).executeTakeFirst();
  return row && { ...withStatus(row), body: row.body };
}

export function attemptsOf(db: Db, deliveryId: number) {
  return db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', '=', deliveryId)
    .orderBy('number')
    .execute();
}

/** What redelivering needs to know of a delivery. */
export function redeliveryFacts(trx: Db, id: number) {
  return trx
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_subscriptions as s', 's.id', 'd.subscription_id')
    .select(['d.job_id', 'd.event_id', 's.active'])
    .where('d.id', '=', id)
    .executeTakeFirst();
}
