import type { AppDeps, Principal } from '../context';
import { ApiError } from '../errors/apiError';
import { envelopeBytes, newEventId } from './events';
import { leaseTestDeliveries, recordAttempts, type TestEventRow } from './outbox';
import { webhookTestData } from './payloads';
import { type SendOptions, sendClaimed, webhookTimeoutMs } from './sender';
import { activeSubscriptions } from './subscriptions';

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
export function organizationKeyRequired(): ApiError {
  return new ApiError(
    400,
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
    throw new ApiError(
      404,
      'WEBHOOK_SUBSCRIPTION_NOT_FOUND',
      'The organization has no active webhook subscription',
    );
  }
  const organization = await deps.db
    .selectFrom('organizations')
    .innerJoin('tenants', 'tenants.id', 'organizations.tenant_id')
    .select(['organizations.code as organizationCode', 'tenants.code as tenantCode'])
    .where('organizations.id', '=', organizationId)
    .executeTakeFirstOrThrow();

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
  const claimed = await leaseTestDeliveries(deps, rows, timeoutMs + 20_000);
  const results = await Promise.all(
    claimed.map((delivery) => sendClaimed(deps, delivery, { ...options, timeoutMs })),
  );
  await recordAttempts(
    deps,
    claimed.map((delivery, index) => ({ delivery, result: results[index]! })),
  );
  return {
    total: claimed.length,
    results: claimed.map((delivery, index) => {
      const result = results[index]!;
      return {
        subscriptionId: delivery.subscriptionId,
        url: delivery.url,
        httpStatus: result.httpStatus,
        latencyMs: result.latencyMs,
        requestPayload: JSON.parse(delivery.body.toString('utf8')) as Record<string, unknown>,
        requestHeaders: result.requestHeaders,
        responseBody: result.responseBody,
        success: result.success,
      };
    }),
  };
}
