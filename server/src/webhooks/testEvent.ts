import crypto from 'node:crypto';
import type { AppDeps, Principal } from '../context';
import { type Db, inTransaction } from '../db/database';
import { parseJsonColumn } from '../db/jsonColumn';
import { DomainError } from '../errors/domainError';
import { type ClaimedJob, enqueueClaimed, kindRecorder, recordResults } from '../jobs/queue';
import { webhookEnvelopeSchema } from './eventSchemas';
import { envelopeBytes, newEventId, retryDelaysMs, webhookJobKind } from './events';
import { type DeliveryWork, webhookDeliveryKind } from './outbox';
import { webhookTestData } from './payloads';
import { insertDelivery, insertEvent, openAttempts, organizationCodes } from './queries/outbox';
import { activeSubscriptions, sealedSecretsOf } from './queries/subscriptions';
import { type SendOptions, sendClaimed, webhookTimeoutMs } from './sender';

/** What a `webhook.test` event's stored body holds: its envelope, as endpoint 17 reports it. */
const TestEnvelope = webhookEnvelopeSchema('webhook.test');

/**
 * Endpoint 17: `webhook.test` to every active subscription of the key's organization, one event
 * per subscription (each receives only its own; the event list filter is bypassed), sent at once
 * and exactly once, and recorded like any delivery (`admin webhook deliveries` lists them).
 */

export interface WebhookTestResult {
  subscriptionId: string;
  url: string;
  /** 0: no connection, or no answer within 10 seconds. */
  httpStatus: number;
  latencyMs: number;
  requestPayload: Record<string, unknown>;
  requestHeaders: Record<string, string>;
  responseBody: string;
  success: boolean;
}

export interface WebhookTestReport {
  total: number;
  results: WebhookTestResult[];
}

/** 400 for a global key: the test concerns one organization's subscriptions. */
export function organizationKeyRequired(): DomainError {
  return new DomainError(
    'ORGANIZATION_KEY_REQUIRED',
    'The webhook test needs an organization API key; a global key belongs to no organization',
  );
}

export async function sendWebhookTest(
  deps: AppDeps,
  principal: Principal,
  options: SendOptions = {},
): Promise<WebhookTestReport> {
  if (principal.kind !== 'apiKey' || principal.keyKind !== 'organization') {
    throw organizationKeyRequired();
  }
  const { organizationId, actor } = principal;
  if (organizationId === null || actor === null) throw organizationKeyRequired();
  const subscriptions = await activeSubscriptions(deps.db, organizationId);
  if (subscriptions.length === 0) {
    throw new DomainError(
      'WEBHOOK_SUBSCRIPTION_NOT_FOUND',
      'The organization has no active webhook subscription',
    );
  }
  const organization = await organizationCodes(deps.db, organizationId);

  const createdAt = deps.clock.now().toISOString();
  const rows: TestEventRow[] = subscriptions.map((subscription) => {
    const eventId = newEventId('webhook.test');
    const data = webhookTestData({
      message: `Test event from ${deps.config.serviceName}: verify the signature and answer 2xx.`,
      subscriptionId: subscription.id,
      triggeredBy: actor.username,
      metadata: { ...organization },
    });
    return {
      eventId,
      tenantId: subscription.tenant_id,
      organizationId,
      subscriptionId: subscription.id,
      url: subscription.url,
      body: envelopeBytes(eventId, 'webhook.test', createdAt, data),
      createdAt,
    };
  });
  const timeoutMs = options.timeoutMs ?? webhookTimeoutMs;
  const leaseMs = timeoutMs + 20_000;
  const claimed = await leaseTestDeliveries(deps, rows, leaseMs);
  const send = { ...options, timeoutMs };
  const results = await Promise.all(claimed.map(({ work }) => sendClaimed(deps, work, send)));
  // Recorded like a runner's result, by the same kind (a failure is final: one attempt).
  const kind = webhookDeliveryKind(deps, { concurrency: 1, leaseMs, send });
  const recorder = kindRecorder(kind);
  await recordResults(
    deps,
    () => retryDelaysMs,
    claimed.map(({ job, work }, index) => {
      const result = results[index]!;
      return recorder.finished(job, work, result, kind.errorOf(result));
    }),
  );
  return {
    total: claimed.length,
    results: claimed.map(({ work }, index) => {
      const result = results[index]!;
      return {
        subscriptionId: work.subscriptionId,
        url: work.url,
        httpStatus: result.httpStatus,
        latencyMs: result.latencyMs,
        requestPayload: parseJsonColumn(
          TestEnvelope,
          'webhook_events.body',
          work.body.toString('utf8'),
        ),
        requestHeaders: result.requestHeaders,
        responseBody: result.responseBody,
        success: result.success,
      };
    }),
  };
}

/** One `webhook.test` event for one subscription, ready to be written and sent at once. */
interface TestEventRow {
  eventId: string;
  tenantId: number;
  organizationId: number;
  subscriptionId: string;
  url: string;
  body: Buffer;
  createdAt: string;
}

/**
 * Writes `webhook.test` events with their deliveries and jobs already claimed by the caller
 * (endpoint 17 sends them itself, synchronously): one attempt allowed and already counted, so no
 * runner ever sends them, not even after a crash (the expired lease finds the attempts used up
 * and the job fails).
 */
function leaseTestDeliveries(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  rows: readonly TestEventRow[],
  leaseMs: number,
): Promise<{ job: ClaimedJob; work: DeliveryWork }[]> {
  return inTransaction(deps.db, async (trx: Db) => {
    const now = deps.clock.now().toISOString();
    const leaseId = crypto.randomUUID();
    const claimed: { job: ClaimedJob; work: DeliveryWork }[] = [];
    for (const row of rows) {
      await insertEvent(trx, { ...row, id: row.eventId, type: 'webhook.test' });
      const job = await enqueueClaimed(trx, deps, {
        kind: webhookJobKind,
        maxAttempts: 1,
        leaseMs,
        leaseId,
      });
      const deliveryId = await insertDelivery(trx, {
        eventId: row.eventId,
        subscriptionId: row.subscriptionId,
        tenantId: row.tenantId,
        jobId: job.id,
        createdAt: now,
      });
      await openAttempts(trx, [{ deliveryId, number: 1 }], now);
      claimed.push({
        job,
        work: {
          deliveryId,
          eventId: row.eventId,
          eventType: 'webhook.test',
          body: row.body,
          subscriptionId: row.subscriptionId,
          url: row.url,
          sealed: await sealedSecretsOf(trx, row.subscriptionId),
        },
      });
    }
    return claimed;
  });
}
