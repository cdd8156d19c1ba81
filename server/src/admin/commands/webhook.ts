import { z } from 'zod';
import { tenantByCode } from '../../tenancy/resolveTenant';
import {
  type AttemptView,
  deliveryDetail,
  deliveryStatuses,
  listDeliveries,
  redeliver,
} from '../../webhooks/deliveries';
import { listSandboxRequests } from '../../webhooks/sandboxReceiver';
import {
  createWebhookSubscription,
  disableWebhookSubscription,
  listWebhookSubscriptions,
  rotateWebhookSecret,
  rotationGraceHours,
  webhookEvents,
  webhookUrl,
} from '../../webhooks/subscriptions';
import { type Command, checked, command, listCommand, option, table } from '../command';

function attemptLine(attempt: AttemptView): string {
  const status = attempt.httpStatus === null ? 'no result' : `HTTP ${attempt.httpStatus}`;
  const latency = attempt.latencyMs === null ? '' : ` in ${attempt.latencyMs} ms`;
  const error = attempt.error === null ? '' : `: ${attempt.error}`;
  return `  #${attempt.number} ${attempt.startedAt} ${status}${latency}${error}`;
}

export const webhookCommands: Command[] = [
  command({
    name: 'webhook create',
    options: z.object({
      tenant: option.text,
      org: option.text,
      url: checked(option.text, webhookUrl),
      events: checked(option.list.optional(), webhookEvents),
    }),
    prepare: ({ tenant: tenantCode, org: organizationCode, url, events }) => {
      return async (deps) => {
        const tenant = await tenantByCode(deps.db, tenantCode);
        const { subscription, secret } = await createWebhookSubscription(deps, tenant, {
          organizationCode,
          url,
          events,
        });
        return {
          json: { id: subscription.id, secret },
          lines: [
            `Created webhook subscription ${subscription.id} of ${subscription.organizationCode} (tenant ${tenant.code}) to ${subscription.url}.`,
            `Events: ${subscription.events.join(', ')}.`,
            'Signing secret (shown once, give it to the receiver now; it cannot be displayed again):',
            secret,
          ],
        };
      };
    },
  }),
  listCommand({
    name: 'webhook list',
    key: 'subscriptions',
    header: ['ID', 'TENANT', 'ORGANIZATION', 'ACTIVE', 'URL', 'EVENTS'],
    list: listWebhookSubscriptions,
    row: (s) => [
      s.id,
      s.tenantCode,
      s.organizationCode,
      s.active ? 'yes' : 'no',
      s.url,
      s.events.join(','),
    ],
  }),
  command({
    name: 'webhook disable',
    options: z.object({ id: option.text }),
    prepare: ({ id }) => {
      return async (deps) => {
        const result = await disableWebhookSubscription(deps, id);
        return {
          json: { id: result.id, active: false, alreadyDisabled: result.alreadyDisabled },
          lines: [
            result.alreadyDisabled
              ? `Webhook subscription ${id} was already disabled; nothing changed.`
              : `Disabled webhook subscription ${id}; no further deliveries.`,
          ],
        };
      };
    },
  }),
  command({
    name: 'webhook rotate-secret',
    options: z.object({
      id: option.text,
      'grace-hours': checked(option.text.optional(), (raw) =>
        raw === undefined ? 24 : rotationGraceHours(raw),
      ),
    }),
    prepare: ({ id, 'grace-hours': graceHours }) => {
      return async (deps) => {
        const rotated = await rotateWebhookSecret(deps, id, graceHours);
        return {
          json: { id, secret: rotated.secret, previousValidUntil: rotated.previousValidUntil },
          lines: [
            rotated.previousValidUntil === null
              ? `Rotated the secret of webhook subscription ${id}; the previous secret no longer signs.`
              : `Rotated the secret of webhook subscription ${id}; until ${rotated.previousValidUntil} requests carry signatures with the new and the previous secret.`,
            'New signing secret (shown once, give it to the receiver now; it cannot be displayed again):',
            rotated.secret,
          ],
        };
      };
    },
  }),
  command({
    name: 'webhook deliveries',
    options: z.object({
      tenant: option.text.optional(),
      status: option.oneOf(deliveryStatuses).optional(),
      limit: option.limit(1000, 50),
    }),
    prepare: ({ tenant: tenantCode, status, limit }) => {
      return async (deps) => {
        const tenant =
          tenantCode === undefined ? undefined : await tenantByCode(deps.db, tenantCode);
        const deliveries = await listDeliveries(deps.db, {
          tenantId: tenant?.id,
          status,
          limit,
        });
        return {
          json: { deliveries },
          lines: table(
            ['ID', 'STATUS', 'ATTEMPTS', 'EVENT', 'TYPE', 'TENANT', 'LAST', 'NEXT', 'URL'],
            deliveries.map((d) => [
              d.id,
              d.inFlight ? 'sending' : d.status,
              `${d.attempts}/${d.maxAttempts}`,
              d.eventId,
              d.eventType,
              d.tenantCode,
              d.lastHttpStatus,
              d.nextAttemptAt,
              d.url,
            ]),
          ),
        };
      };
    },
  }),
  command({
    name: 'webhook delivery',
    options: z.object({ id: option.positiveInteger }),
    prepare: ({ id }) => {
      return async (deps) => {
        const d = await deliveryDetail(deps.db, id);
        return {
          json: { delivery: d },
          lines: [
            `Delivery ${d.id}: ${d.eventType} ${d.eventId} to ${d.url} (subscription ${d.subscriptionId}, tenant ${d.tenantCode})`,
            `Status ${d.inFlight ? 'pending, being sent' : d.status}; attempts ${d.attempts} of ${d.maxAttempts}${d.nextAttemptAt ? `; next at ${d.nextAttemptAt}` : ''}${d.finishedAt ? `; finished ${d.finishedAt}` : ''}.`,
            `Body: ${d.bodyBytes} bytes, sha256 ${d.bodySha256} (the same on every attempt).`,
            d.attemptList.length === 0 ? 'No attempt yet.' : 'Attempts:',
            ...d.attemptList.map(attemptLine),
          ],
        };
      };
    },
  }),
  command({
    name: 'webhook redeliver',
    options: z.object({ id: option.positiveInteger }),
    prepare: ({ id }) => {
      return async (deps) => {
        const result = await redeliver(deps, id);
        return {
          json: { ...result },
          lines: [
            result.previousStatus === 'pending'
              ? `Delivery ${id} was waiting for a retry; it is due now.`
              : `Delivery ${id} (${result.previousStatus}) gets one more attempt, due now, with the same event id and body.`,
          ],
        };
      };
    },
  }),
  command({
    name: 'webhook received',
    options: z.object({ tag: option.text.optional(), limit: option.limit(1000, 10) }),
    prepare: ({ tag, limit }) => {
      return async (deps) => {
        const requests = await listSandboxRequests(deps.db, { tag, limit });
        const lines =
          requests.length === 0
            ? [`Nothing received${tag === undefined ? '' : ` for tag ${tag}`}.`]
            : requests.flatMap((r) => [
                `#${r.id} ${r.receivedAt} tag ${r.tag} from ${r.remoteAddress ?? '-'}, ${r.bodyBytes} bytes${r.truncated ? ' (body cut, first bytes kept)' : ''}`,
                ...Object.entries(r.headers).map(([name, value]) => `  ${name}: ${value}`),
                `  ${r.body}`,
              ]);
        return { json: { requests }, lines };
      };
    },
  }),
];
