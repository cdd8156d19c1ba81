import crypto from 'node:crypto';
import type { AppDeps } from '../context';
import { type Db, inTransaction } from '../db/database';
import { DomainError } from '../errors/domainError';
import { isoNow } from '../platform/clock';
import { decryptSecret, encryptSecret, type ServiceSecrets } from '../platform/secrets';
import type { TenantRow } from '../tenancy/resolveTenant';
import { organizationByCode } from '../tenancy/service';
import {
  insertSubscription,
  subscribedEventsOf,
  subscriptionById,
  subscriptionRows,
  updateSubscription,
} from './queries/subscriptions';
import { newWebhookSecret } from './signature';

/** Events a subscription may list. `webhook.test` is never listed: it bypasses the filter. */
export const subscribableEvents = [
  'document.completed',
  'document.rejected',
  'notification.task_assigned_internal',
  'notification.task_assigned_external',
  'notification.task_rejected',
  'notification.process_finished',
] as const;

export type SubscribableEvent = (typeof subscribableEvents)[number];

/** `document.*` events are on by default; `notification.*` events are opt-in. */
export const defaultEvents: SubscribableEvent[] = ['document.completed', 'document.rejected'];

function isSubscribable(event: string): event is SubscribableEvent {
  return (subscribableEvents as readonly string[]).includes(event);
}

/** A receiver URL: absolute, https, without user-info. */
export function webhookUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new DomainError('VALIDATION_ERROR', `url is not an absolute URL: "${raw}"`, {
      field: 'url',
    });
  }
  if (url.protocol !== 'https:') {
    throw new DomainError('VALIDATION_ERROR', `url must use https, got ${url.protocol}`, {
      field: 'url',
    });
  }
  if (url.username || url.password) {
    throw new DomainError('VALIDATION_ERROR', 'url must not carry a user name or password', {
      field: 'url',
    });
  }
  return url.href;
}

/** The event list of a subscription: the defaults when none is given, known events only. */
export function webhookEvents(requested: string[] | undefined): SubscribableEvent[] {
  if (requested === undefined) return [...defaultEvents];
  const events = [...new Set(requested.map((event) => event.trim()).filter(Boolean))];
  const unknown = events.filter((event) => !isSubscribable(event));
  if (unknown.length > 0) {
    throw new DomainError(
      'VALIDATION_ERROR',
      `Unknown event(s): ${unknown.join(', ')}; allowed: ${subscribableEvents.join(', ')}`,
      { field: 'events' },
    );
  }
  if (events.length === 0) {
    throw new DomainError('VALIDATION_ERROR', 'events must list at least one event', {
      field: 'events',
    });
  }
  return events as SubscribableEvent[];
}

function subscriptionNotFound(id: string): DomainError {
  return new DomainError('WEBHOOK_SUBSCRIPTION_NOT_FOUND', `No webhook subscription ${id}`);
}

/** What an operator may see of a subscription: never its secret. */
export interface SubscriptionView {
  id: string;
  tenantCode: string;
  organizationCode: string;
  url: string;
  events: string[];
  active: boolean;
  createdAt: string;
  updatedAt: string;
}

/**
 * A subscription of one organization, with a fresh HMAC secret (`whsec_…`) stored encrypted.
 * The secret is returned here only: it is shown once.
 */
export function createWebhookSubscription(
  deps: Pick<AppDeps, 'db' | 'secrets' | 'clock'>,
  tenant: TenantRow,
  input: { organizationCode: string; url: string; events?: string[] | undefined },
): Promise<{ subscription: SubscriptionView; secret: string }> {
  const url = webhookUrl(input.url);
  const events = webhookEvents(input.events);
  return inTransaction(deps.db, async (trx) => {
    const organization = await organizationByCode(trx, tenant.id, input.organizationCode);
    const secret = newWebhookSecret();
    const now = isoNow(deps.clock);
    const id = crypto.randomUUID();
    await insertSubscription(trx, {
      id,
      tenantId: tenant.id,
      organizationId: organization.id,
      url,
      events: JSON.stringify(events),
      secretEncrypted: encryptSecret(deps.secrets, secret),
      now,
    });
    return {
      subscription: {
        id,
        tenantCode: tenant.code,
        organizationCode: organization.code,
        url,
        events,
        active: true,
        createdAt: now,
        updatedAt: now,
      },
      secret,
    };
  });
}

/** Subscriptions, oldest first, optionally of one tenant. */
export async function listWebhookSubscriptions(
  db: Db,
  tenantId?: number,
): Promise<SubscriptionView[]> {
  const rows = await subscriptionRows(db, tenantId);
  return rows.map((row) => ({
    ...row,
    events: subscribedEventsOf(row),
    active: row.active === 1,
  }));
}

/** Stops deliveries to a subscription (idempotent). */
export function disableWebhookSubscription(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  id: string,
): Promise<{ id: string; alreadyDisabled: boolean }> {
  return inTransaction(deps.db, async (trx) => {
    const row = await subscriptionById(trx, id);
    if (!row) throw subscriptionNotFound(id);
    if (row.active === 0) return { id, alreadyDisabled: true };
    await updateSubscription(trx, id, { active: 0, updated_at: isoNow(deps.clock) });
    return { id, alreadyDisabled: false };
  });
}

/** The longest grace period of a rotation: 30 days. */
export const maxRotationGraceHours = 720;

/** `--grace-hours`: a whole number of hours from 0 (no grace) to 720. */
export function rotationGraceHours(raw: string): number {
  if (!/^\d{1,4}$/.test(raw) || Number(raw) > maxRotationGraceHours) {
    throw new DomainError(
      'VALIDATION_ERROR',
      `grace-hours must be a whole number from 0 to ${maxRotationGraceHours}, got "${raw}"`,
      { field: 'graceHours' },
    );
  }
  return Number(raw);
}

/**
 * Gives a subscription a new secret (returned here only: shown once). The secret it replaces
 * keeps signing, next to the new one, until `graceHours` from now; a rotation during a grace
 * period drops the older previous secret at once (two secrets at most). 0 hours: no grace.
 */
export function rotateWebhookSecret(
  deps: Pick<AppDeps, 'db' | 'secrets' | 'clock'>,
  id: string,
  graceHours: number,
): Promise<{ id: string; secret: string; previousValidUntil: string | null }> {
  return inTransaction(deps.db, async (trx) => {
    const row = await subscriptionById(trx, id);
    if (!row) throw subscriptionNotFound(id);
    const now = deps.clock.now();
    const previousValidUntil =
      graceHours > 0 ? new Date(now.getTime() + graceHours * 3_600_000).toISOString() : null;
    const secret = newWebhookSecret();
    await updateSubscription(trx, id, {
      secret_encrypted: encryptSecret(deps.secrets, secret),
      previous_secret_encrypted: previousValidUntil === null ? null : row.secret_encrypted,
      previous_secret_expires_at: previousValidUntil,
      updated_at: now.toISOString(),
    });
    return { id, secret, previousValidUntil };
  });
}

/** The sealed secrets of a subscription row, as stored. */
export interface SealedSecrets {
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: string | null;
}

/**
 * Secrets already decrypted, by their sealed form (authenticated encryption under the one
 * SECRET_KEY: a sealed text always opens to the same secret). Kept by a sender of many
 * deliveries so that each one costs no decryption; bounded, emptied when full.
 */
export class OpenedSecrets {
  readonly #opened = new Map<string, string>();
  constructor(readonly capacity = 1_000) {}

  open(secrets: ServiceSecrets, sealed: string): string {
    let secret = this.#opened.get(sealed);
    if (secret === undefined) {
      secret = decryptSecret(secrets, sealed);
      if (this.#opened.size >= this.capacity) this.#opened.clear();
      this.#opened.set(sealed, secret);
    }
    return secret;
  }
}

/** The secrets that sign a request sent at `now`: the current one, then a previous one in grace. */
export function signingSecrets(
  secrets: ServiceSecrets,
  sealed: SealedSecrets,
  now: Date,
  opened?: OpenedSecrets,
): string[] {
  const open = (text: string) =>
    opened ? opened.open(secrets, text) : decryptSecret(secrets, text);
  const current = open(sealed.secret_encrypted);
  const previous = sealed.previous_secret_encrypted;
  const until = sealed.previous_secret_expires_at;
  return previous !== null && until !== null && until > now.toISOString()
    ? [current, open(previous)]
    : [current];
}
