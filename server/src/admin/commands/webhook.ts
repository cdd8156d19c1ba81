import type { WebhookDeliveryStatus } from '../../db/schema';
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
import { type Args, type Command, listCommand, table, valueOptions } from '../command';

/** `--limit N`: 1 to 1000, `fallback` when absent. */
function limitOf(args: Args, fallback: number): number {
  if (args.optionalText('limit') === undefined) return fallback;
  const limit = args.positiveInteger('limit');
  if (limit > 1000) args.fail('--limit must be at most 1000');
  return limit;
}

function attemptLine(attempt: AttemptView): string {
  const status = attempt.httpStatus === null ? 'no result' : `HTTP ${attempt.httpStatus}`;
  const latency = attempt.latencyMs === null ? '' : ` in ${attempt.latencyMs} ms`;
  const error = attempt.error === null ? '' : `: ${attempt.error}`;
  return `  #${attempt.number} ${attempt.startedAt} ${status}${latency}${error}`;
}

export const webhookCommands: Command[] = [
  {
    name: 'webhook create',
    options: valueOptions('tenant', 'org', 'url', 'events'),
    prepare: (args) => {
      const tenantCode = args.text('tenant');
      const organizationCode = args.text('org');
      const url = args.check(() => webhookUrl(args.text('url')));
      const events = args.check(() => webhookEvents(args.list('events')));
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
  },
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
  {
    name: 'webhook disable',
    options: valueOptions('id'),
    prepare: (args) => {
      const id = args.text('id');
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
  },
  {
    name: 'webhook rotate-secret',
    options: valueOptions('id', 'grace-hours'),
    prepare: (args) => {
      const id = args.text('id');
      const raw = args.optionalText('grace-hours');
      const graceHours = raw === undefined ? 24 : args.check(() => rotationGraceHours(raw));
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
  },
  {
    name: 'webhook deliveries',
    options: valueOptions('tenant', 'status', 'limit'),
    prepare: (args) => {
      const tenantCode = args.optionalText('tenant');
      const status = args.optionalText('status');
      if (status !== undefined && !(deliveryStatuses as readonly string[]).includes(status)) {
        args.fail(`--status must be one of ${deliveryStatuses.join(', ')}, got "${status}"`);
      }
      const limit = limitOf(args, 50);
      return async (deps) => {
        const tenant =
          tenantCode === undefined ? undefined : await tenantByCode(deps.db, tenantCode);
        const deliveries = await listDeliveries(deps.db, {
          tenantId: tenant?.id,
          status: status as WebhookDeliveryStatus | undefined,
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
  },
  {
    name: 'webhook delivery',
    options: valueOptions('id'),
    prepare: (args) => {
      const id = args.positiveInteger('id');
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
  },
  {
    name: 'webhook redeliver',
    options: valueOptions('id'),
    prepare: (args) => {
      const id = args.positiveInteger('id');
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
  },
  {
    name: 'webhook received',
    options: valueOptions('tag', 'limit'),
    prepare: (args) => {
      const tag = args.optionalText('tag');
      const limit = limitOf(args, 10);
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
  },
];
