import { type ExpressionBuilder, sql } from 'kysely';
import { type Db, inTransaction } from '../db/database';
import type { Database, NotifyChannel } from '../db/schema';
import type { OutboxRow } from './outbox';

/**
 * The outbox's SQL: the worker's claim and completion (the karakeep liteque pattern on our one
 * connection: claim in a short BEGIN IMMEDIATE transaction with a lease and an allocation id,
 * complete only while the allocation id still matches), and the CLI's reads.
 */

/** A final row keeps no sensitive body. */
const erasedWhenSensitive = {
  text_body: sql<string | null>`CASE WHEN sensitive = 1 THEN NULL ELSE text_body END`,
  html_body: sql<string | null>`CASE WHEN sensitive = 1 THEN NULL ELSE html_body END`,
};

const noLease = { lease_id: null, lease_expires_at: null };

export interface ClaimOptions {
  now: Date;
  allocation: string;
  batchSize: number;
  leaseMs: number;
  maxAttempts: number;
}

/**
 * Fails what can no longer be sent (past `discard_after`; or whose last attempt was cut off and
 * whose lease expired), then leases up to `batchSize` due rows: pending, due, and not leased or
 * with an expired lease (its sender died). The attempt is counted at claim time, so a message
 * that kills its sender cannot be retried forever.
 */
export async function claimDue(db: Db, options: ClaimOptions): Promise<OutboxRow[]> {
  const now = options.now.toISOString();
  const free = (eb: ExpressionBuilder<Database, 'notify_outbox'>) =>
    eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', now)]);
  // An idle poll reads without taking the write lock.
  const anyDue = await db
    .selectFrom('notify_outbox')
    .select('id')
    .where('status', '=', 'pending')
    .where(free)
    .where((eb) => eb.or([eb('next_attempt_at', '<=', now), eb('discard_after', '<=', now)]))
    .limit(1)
    .executeTakeFirst();
  if (anyDue === undefined) return [];
  return inTransaction(db, async (trx) => {
    await trx
      .updateTable('notify_outbox')
      .set({
        status: 'failed',
        last_error: 'discarded: not sent before discard_after',
        ...noLease,
        ...erasedWhenSensitive,
      })
      .where('status', '=', 'pending')
      .where('discard_after', '<=', now)
      .where(free)
      .execute();
    await trx
      .updateTable('notify_outbox')
      .set({
        status: 'failed',
        last_error: 'the last attempt was interrupted (lease expired)',
        ...noLease,
        ...erasedWhenSensitive,
      })
      .where('status', '=', 'pending')
      .where('attempts', '>=', options.maxAttempts)
      .where('lease_expires_at', '<=', now)
      .execute();
    const rows = await trx
      .selectFrom('notify_outbox')
      .selectAll()
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where(free)
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(options.batchSize)
      .execute();
    if (rows.length === 0) return [];
    await trx
      .updateTable('notify_outbox')
      .set({
        lease_id: options.allocation,
        lease_expires_at: new Date(options.now.getTime() + options.leaseMs).toISOString(),
        attempts: sql<number>`attempts + 1`,
        last_attempt_at: now,
      })
      .where(
        'id',
        'in',
        rows.map((row) => row.id),
      )
      .execute();
    return rows.map((row) => ({
      ...row,
      attempts: row.attempts + 1,
      lease_id: options.allocation,
      last_attempt_at: now,
    }));
  });
}

/** Sent: true when this allocation still held the lease. */
export async function markSent(
  db: Db,
  row: OutboxRow,
  at: Date,
  providerMessageId: string | null,
): Promise<boolean> {
  const result = await db
    .updateTable('notify_outbox')
    .set({
      status: 'sent',
      sent_at: at.toISOString(),
      provider_message_id: providerMessageId,
      last_error: null,
      ...noLease,
      ...erasedWhenSensitive,
    })
    .where('id', '=', row.id)
    .where('lease_id', '=', row.lease_id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * A failed attempt: retried at `retryAt`, or failed for good when `retryAt` is null. True when
 * this allocation still held the lease.
 */
export async function markAttemptFailed(
  db: Db,
  row: OutboxRow,
  error: string,
  retryAt: Date | null,
): Promise<boolean> {
  const result = await db
    .updateTable('notify_outbox')
    .set(
      retryAt === null
        ? { status: 'failed', last_error: error, ...noLease, ...erasedWhenSensitive }
        : { next_attempt_at: retryAt.toISOString(), last_error: error, ...noLease },
    )
    .where('id', '=', row.id)
    .where('lease_id', '=', row.lease_id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export interface OutboxFilter {
  channel: NotifyChannel;
  limit: number;
  /** Matches the intended recipient or the address it was sent to. */
  to?: string | undefined;
  tenantId?: number | undefined;
}

export type OutboxRowWithTenant = OutboxRow & { tenant_code: string };

/** The newest messages of a channel first. */
export function lastMessages(db: Db, filter: OutboxFilter): Promise<OutboxRowWithTenant[]> {
  let query = db
    .selectFrom('notify_outbox')
    .innerJoin('tenants', 'tenants.id', 'notify_outbox.tenant_id')
    .selectAll('notify_outbox')
    .select('tenants.code as tenant_code')
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
  return query.execute();
}

export function messageById(
  db: Db,
  channel: NotifyChannel,
  id: number,
): Promise<OutboxRowWithTenant | undefined> {
  return db
    .selectFrom('notify_outbox')
    .innerJoin('tenants', 'tenants.id', 'notify_outbox.tenant_id')
    .selectAll('notify_outbox')
    .select('tenants.code as tenant_code')
    .where('notify_outbox.channel', '=', channel)
    .where('notify_outbox.id', '=', id)
    .executeTakeFirst();
}
