import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { credentialAreas } from '../auth/areas';
import { authenticate } from '../auth/authenticate';
import { requirePermission } from '../auth/permissions';
import { clientAddress, type RateLimiter, rateLimit } from '../auth/rateLimit';
import type { AppEnv } from '../context';
import { limitBody } from '../http/bodyLimit';
import {
  createRouter,
  envelopeOf,
  errorResponses,
  guardErrors,
  jsonContent,
} from '../http/openapi';
import { webhookEnvelopeSchema, webhookEventCatalog, webhookHeadersSchema } from './eventSchemas';
import type { WebhookEventType } from './events';
import {
  keptHeaders,
  readCappedBody,
  recordSandboxRequest,
  sandboxLimits,
  sandboxTag,
} from './sandboxReceiver';
import { SandboxReceiptEnvelope, SandboxTagParam, WebhookTestEnvelope } from './schemas';
import { organizationKeyRequired, sendWebhookTest } from './testEvent';

/** A global key passes the area's authentication only to get this 400 before any permission. */
const organizationKeyOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  const principal = c.get('principal');
  if (principal.kind === 'apiKey' && principal.keyKind !== 'organization') {
    throw organizationKeyRequired();
  }
  await next();
};

/** Endpoints 17 (webhook test) and 18 (sandbox receiver), mounted under /api by app.ts. */
export function webhookRoutes(limiter: RateLimiter) {
  const router = createRouter();

  const testRoute = createRoute({
    method: 'post',
    path: '/integration/webhooks/test',
    operationId: 'sendWebhookTest',
    tags: ['Webhooks'],
    summary: 'Send webhook.test to the organization subscriptions (17)',
    description:
      'Organization API key bound to a user; no body. One webhook.test per active subscription of the key organization, sent once and never retried. 400 ORGANIZATION_KEY_REQUIRED for a global key, 403 with an access or partner token, 404 WEBHOOK_SUBSCRIPTION_NOT_FOUND without an active subscription.',
    security: [{ ApiKey: [] }],
    middleware: [
      authenticate(credentialAreas.webhookTest),
      rateLimit(limiter, 'api'),
      organizationKeyOnly,
      requirePermission('webhook:test'),
    ] as const,
    responses: {
      200: jsonContent(WebhookTestEnvelope, 'One result per subscription'),
      ...errorResponses(guardErrors, [
        'ORGANIZATION_KEY_REQUIRED',
        'WEBHOOK_SUBSCRIPTION_NOT_FOUND',
      ]),
    },
  });
  router.openapi(testRoute, async (c) => {
    const deps = c.get('deps');
    const data = await sendWebhookTest(deps, c.get('principal'));
    return c.json(envelopeOf(c, data, 'Webhook test sent'), 200);
  });

  const sandboxRoute = createRoute({
    method: 'post',
    path: '/webhook-test/{tag}',
    operationId: 'recordSandboxRequest',
    tags: ['Webhooks'],
    summary: 'Sandbox receiver: records the request and answers 201 (18)',
    description: `No credential, no signature check, any body. Keeps the headers (credential headers redacted) and the first ${sandboxLimits.bodyBytes} bytes of the body; the last ${sandboxLimits.perTag} requests per tag. Onboarding only: never a production subscription target, never real data. Rate-limited per client address.`,
    // Anyone may send: it stands in for a partner's receiver.
    security: [],
    // readCappedBody keeps the first bytes and stops reading: any size may be announced.
    middleware: [rateLimit(limiter, 'api'), limitBody(Number.POSITIVE_INFINITY)] as const,
    request: { params: SandboxTagParam },
    responses: {
      201: jsonContent(SandboxReceiptEnvelope, 'Recorded'),
      ...errorResponses(['RATE_LIMITED']),
    },
  });
  router.openapi(sandboxRoute, async (c) => {
    const deps = c.get('deps');
    const tag = sandboxTag(c.req.valid('param').tag);
    const { body, bytesRead, truncated } = await readCappedBody(c.req.raw);
    const announced = Number(c.req.header('content-length'));
    const bodyBytes = truncated && Number.isSafeInteger(announced) ? announced : bytesRead;
    const { receivedAt } = await recordSandboxRequest(deps, {
      tag,
      headers: keptHeaders(c.req.raw.headers),
      body,
      bodyBytes,
      truncated,
      remoteAddress: clientAddress(c),
    });
    return c.json(
      {
        statusCode: 201,
        message: 'Recorded',
        data: { tag, receivedAt, bodyBytes, truncated },
        timestamp: receivedAt,
      },
      201,
    );
  });

  return router;
}

/**
 * The seven events in the document's top-level `webhooks` (OpenAPI 3.1): what the service POSTs
 * to a subscription URL, so a partner can generate its receiver's types. Registered on the app's
 * own registry (a mounted router would prefix the event names with its path).
 */
export function registerWebhookEvents(registry: OpenAPIHono['openAPIRegistry']): void {
  for (const type of Object.keys(webhookEventCatalog) as WebhookEventType[]) {
    const event = webhookEventCatalog[type];
    registry.registerWebhook({
      method: 'post',
      path: type,
      operationId: event.operationId,
      tags: ['Webhooks'],
      summary: event.summary,
      description:
        'Verify X-Webhook-Signature on the raw body before parsing, deduplicate on X-Webhook-Id, answer 2xx within 10 seconds and work afterwards. Anything else is retried after 1 s, 10 s, 1 min, 10 min and 1 h (webhook.test: never). See docs/webhooks.md.',
      // The receiver checks the body's HMAC signature (a header), not a credential of ours.
      security: [],
      request: {
        headers: webhookHeadersSchema(type),
        body: {
          required: true,
          content: { 'application/json': { schema: webhookEnvelopeSchema(type) } },
        },
      },
      responses: {
        200: { description: 'Any 2xx answer: delivered' },
        default: { description: 'Any other answer, or none within 10 seconds: a failed attempt' },
      },
    });
  }
}
