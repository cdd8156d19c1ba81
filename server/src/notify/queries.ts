import { type Insertable, type Selectable, sql } from 'kysely';
import type { Db } from '../db/database';
import type {
  DevOutboxTable,
  JobStatus,
  NotifyChannel,
  NotifyOutboxTable,
  NotifyStatus,
} from '../db/schema';

/**
 * The notification outbox's SQL: messages and their facts. Queue state (attempts, due time,
 * lease, last error) is the message's job's, read here only to show it.
 */

export type OutboxRow = Selectable<NotifyOutboxTable>;

/** last_error shown for a message that was never queued (sandbox without an address). */
export const suppressedReason = 'sandbox: the tenant has no developer address';

/** A final message keeps no sensitive body. */
const erasedWhenSensitive = {
  text_body: sql<string | null>`CASE WHEN sensitive = 1 THEN NULL ELSE text_body END`,
  html_body: sql<string | null>`CASE WHEN sensitive = 1 THEN NULL ELSE html_body END`,
};

export function developerContact(trx: Db, tenantId: number) {
  return trx
    .selectFrom('tenants')
    .select(['developer_email', 'developer_phone'])
    .where('id', '=', tenantId)
    .executeTakeFirst();
}

export async function insertMessage(
  trx: Db,
  values: Insertable<NotifyOutboxTable>,
): Promise<number> {
  const row = await trx
    .insertInto('notify_outbox')
    .values(values)
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** The messages the claimed jobs send. */
export function messagesOfJobs(trx: Db, jobIds: readonly number[]): Promise<OutboxRow[]> {
  return trx.selectFrom('notify_outbox').selectAll().where('job_id', 'in', jobIds).execute();
}

/** Sent: the provider's id and the time; a sensitive body is erased. */
export async function markSent(
  trx: Db,
  id: number,
  at: string,
  providerMessageId: string | null,
): Promise<void> {
  await trx
    .updateTable('notify_outbox')
    .set({ sent_at: at, provider_message_id: providerMessageId, ...erasedWhenSensitive })
    .where('id', '=', id)
    .execute();
}

/** Final without being sent: a sensitive body is erased. */
export async function eraseSensitiveOfJobs(trx: Db, jobIds: readonly number[]): Promise<void> {
  if (jobIds.length === 0) return;
  await trx
    .updateTable('notify_outbox')
    .set(erasedWhenSensitive)
    .where('job_id', 'in', jobIds)
    .where('sensitive', '=', 1)
    .execute();
}

export interface OutboxFilter {
  channel: NotifyChannel;
  limit: number;
  /** Matches the intended recipient or the address it was sent to. */
  to?: string | undefined;
  tenantId?: number | undefined;
}

/** A message with its tenant and the state of its job, under the names the views use. */
export type OutboxRowWithTenant = OutboxRow & {
  tenant_code: string;
  status: NotifyStatus;
  attempts: number;
  /** The due time of the next attempt (the lease expiry while in flight). */
  next_attempt_at: string | null;
  lease_id: string | null;
  last_error: string | null;
  last_attempt_at: string | null;
};

const statusOfJob: Record<JobStatus, NotifyStatus> = {
  pending: 'pending',
  done: 'sent',
  failed: 'failed',
};

function messageQuery(db: Db) {
  return db
    .selectFrom('notify_outbox')
    .innerJoin('tenants', 'tenants.id', 'notify_outbox.tenant_id')
    .leftJoin('jobs', 'jobs.id', 'notify_outbox.job_id')
    .selectAll('notify_outbox')
    .select([
      'tenants.code as tenant_code',
      'jobs.status as job_status',
      'jobs.attempts',
      'jobs.run_at',
      'jobs.lease_id',
      'jobs.last_error',
      'jobs.last_attempt_at',
    ]);
}

type MessageRow = Awaited<ReturnType<ReturnType<typeof messageQuery>['executeTakeFirstOrThrow']>>;

function withJob({ job_status, run_at, ...row }: MessageRow): OutboxRowWithTenant {
  const queued = job_status !== null;
  return {
    ...row,
    status: queued ? statusOfJob[job_status] : 'suppressed',
    attempts: row.attempts ?? 0,
    next_attempt_at: run_at,
    last_error: queued ? row.last_error : suppressedReason,
  };
}

/** The newest messages of a channel first. */
export async function lastMessages(db: Db, filter: OutboxFilter): Promise<OutboxRowWithTenant[]> {
  let query = messageQuery(db)
    .where('notify_outbox.channel', '=', filter.channel)
    .orderBy('notify_outbox.id', 'desc')
    .limit(filter.limit);
  const to = filter.to;
  if (to !== undefined) {
    // Addresses compare without case; phone numbers are stored normalized.
    const key = to.toLowerCase();
    query = query.where((eb) =>
      eb.or([
        eb(eb.fn('lower', ['notify_outbox.recipient']), '=', key),
        eb(eb.fn('lower', ['notify_outbox.send_to']), '=', key),
      ]),
    );
  }
  if (filter.tenantId !== undefined) {
    query = query.where('notify_outbox.tenant_id', '=', filter.tenantId);
  }
  return (await query.execute()).map(withJob);
}

export async function messageById(
  db: Db,
  channel: NotifyChannel | undefined,
  id: number,
): Promise<OutboxRowWithTenant | undefined> {
  let query = messageQuery(db).where('notify_outbox.id', '=', id);
  if (channel !== undefined) query = query.where('notify_outbox.channel', '=', channel);
  const row = await query.executeTakeFirst();
  return row && withJob(row);
}

export type DevOutboxRow = Selectable<DevOutboxTable>;

/** Records what a development transport sent; a provider id recorded already keeps its row. */
export async function insertDevOutbox(db: Db, values: Insertable<DevOutboxTable>): Promise<void> {
  await db
    .insertInto('dev_outbox')
    .values(values)
    .onConflict((conflict) => conflict.doNothing())
    .execute();
}

export function devOutboxByProviderIds(
  db: Db,
  providerMessageIds: readonly string[],
): Promise<DevOutboxRow[]> {
  if (providerMessageIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('dev_outbox')
    .selectAll()
    .where('provider_message_id', 'in', providerMessageIds)
    .execute();
}

/** What the development outbox sent on a channel, to one recipient or all, newest first. */
export function devOutboxOf(
  db: Db,
  channel: NotifyChannel,
  recipient?: string,
): Promise<DevOutboxRow[]> {
  let query = db.selectFrom('dev_outbox').selectAll().where('channel', '=', channel);
  if (recipient !== undefined) query = query.where('recipient', '=', recipient);
  return query.orderBy('id', 'desc').execute();
}
