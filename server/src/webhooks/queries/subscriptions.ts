import type { Db } from '../../db/database';
import { parseJsonColumn, StringList } from '../../db/jsonColumn';

/** Webhook subscriptions: written by the operator, read by the outbox. */

/** `webhook_subscriptions.events`: the JSON array of event types the subscription takes. */
export function subscribedEventsOf(row: { events: string }): string[] {
  return parseJsonColumn(StringList, 'webhook_subscriptions.events', row.events);
}

export async function insertSubscription(
  trx: Db,
  row: {
    id: string;
    tenantId: number;
    organizationId: number;
    url: string;
    events: string;
    secretEncrypted: string;
    now: string;
  },
): Promise<void> {
  await trx
    .insertInto('webhook_subscriptions')
    .values({
      id: row.id,
      tenant_id: row.tenantId,
      organization_id: row.organizationId,
      url: row.url,
      events: row.events,
      secret_encrypted: row.secretEncrypted,
      active: 1,
      created_at: row.now,
      updated_at: row.now,
    })
    .execute();
}

/** Subscriptions with their tenant and organization codes, oldest first. */
export function subscriptionRows(db: Db, tenantId?: number) {
  let query = db
    .selectFrom('webhook_subscriptions')
    .innerJoin('tenants', 'tenants.id', 'webhook_subscriptions.tenant_id')
    .innerJoin('organizations', 'organizations.id', 'webhook_subscriptions.organization_id')
    .select([
      'webhook_subscriptions.id as id',
      'tenants.code as tenantCode',
      'organizations.code as organizationCode',
      'webhook_subscriptions.url as url',
      'webhook_subscriptions.events as events',
      'webhook_subscriptions.active as active',
      'webhook_subscriptions.created_at as createdAt',
      'webhook_subscriptions.updated_at as updatedAt',
    ])
    .orderBy('webhook_subscriptions.created_at')
    .orderBy('webhook_subscriptions.id');
  if (tenantId !== undefined) query = query.where('webhook_subscriptions.tenant_id', '=', tenantId);
  return query.execute();
}

export function subscriptionById(trx: Db, id: string) {
  return trx
    .selectFrom('webhook_subscriptions')
    .select(['id', 'active', 'secret_encrypted'])
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function updateSubscription(
  trx: Db,
  id: string,
  values: {
    active?: number;
    secret_encrypted?: string;
    previous_secret_encrypted?: string | null;
    previous_secret_expires_at?: string | null;
    updated_at: string;
  },
): Promise<void> {
  await trx.updateTable('webhook_subscriptions').set(values).where('id', '=', id).execute();
}

/** Active subscriptions of an organization, oldest first. */
export function activeSubscriptions(db: Db, organizationId: number) {
  return db
    .selectFrom('webhook_subscriptions')
    .select(['id', 'tenant_id', 'url', 'events'])
    .where('organization_id', '=', organizationId)
    .where('active', '=', 1)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The sealed secrets of a subscription, as stored. */
export function sealedSecretsOf(trx: Db, subscriptionId: string) {
  return trx
    .selectFrom('webhook_subscriptions')
    .select(['secret_encrypted', 'previous_secret_encrypted', 'previous_secret_expires_at'])
    .where('id', '=', subscriptionId)
    .executeTakeFirstOrThrow();
}
