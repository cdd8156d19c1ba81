import { tenantByCode } from '../../tenancy/resolveTenant';
import {
  createWebhookSubscription,
  disableWebhookSubscription,
  listWebhookSubscriptions,
  webhookEvents,
  webhookUrl,
} from '../../webhooks/subscriptions';
import { type Command, listCommand, valueOptions } from '../command';

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
];
