import type { NotifyChannel } from '../../db/schema';
import { isEmailAddress, normalizePhone } from '../../notify/outbox';
import { lastOutboxMessages, mailDetail, type OutboxView } from '../../notify/views';
import { tenantByCode } from '../../tenancy/resolveTenant';
import { type Args, type Command, table, valueOptions } from '../command';

/** Outgoing mail and SMS: the operator's view of the notification outbox. */

const maxLimit = 200;

function limitOf(args: Args): number {
  if (args.optionalText('limit') === undefined) return 20;
  const limit = args.positiveInteger('limit');
  if (limit > maxLimit) args.fail(`--limit must be at most ${maxLimit}`);
  return limit;
}

function statusOf(message: OutboxView): string {
  return message.sandbox ? `${message.status} (sandbox)` : message.status;
}

function hiddenText(message: OutboxView): string {
  return message.sensitive ? '[sensitive: not shown]' : '[erased]';
}

/** `<channel> last [--limit N] [--to X] [--tenant T]`: the newest messages first. */
function lastCommand(
  channel: NotifyChannel,
  readTo: (args: Args) => string | undefined,
  header: string[],
  row: (message: OutboxView) => (string | number | null)[],
): Command {
  return {
    name: `${channel} last`,
    options: valueOptions('limit', 'to', 'tenant'),
    prepare: (args) => {
      const limit = limitOf(args);
      const to = readTo(args);
      const tenantCode = args.optionalCode('tenant');
      return async (deps) => {
        const tenant =
          tenantCode === undefined ? undefined : await tenantByCode(deps.db, tenantCode);
        const messages = await lastOutboxMessages(deps, {
          channel,
          limit,
          to,
          tenantId: tenant?.id,
        });
        const lines = messages.length === 0 ? ['No messages.'] : table(header, messages.map(row));
        return { json: { messages }, lines };
      };
    },
  };
}

export const notifyCommands: Command[] = [
  lastCommand(
    'mail',
    (args) => {
      const to = args.optionalText('to');
      if (to !== undefined && !isEmailAddress(to))
        args.fail(`--to is not an e-mail address: ${to}`);
      return to;
    },
    ['ID', 'CREATED', 'STATUS', 'KIND', 'TO', 'SENT TO', 'TRIES', 'SUBJECT'],
    (m) => [m.id, m.createdAt, statusOf(m), m.kind, m.to, m.sentTo, m.attempts, m.subject],
  ),
  lastCommand(
    'sms',
    (args) => {
      const to = args.optionalText('to');
      if (to === undefined) return undefined;
      return normalizePhone(to) ?? args.fail(`--to is not a phone number: ${to}`);
    },
    ['ID', 'CREATED', 'STATUS', 'KIND', 'TO', 'SENT TO', 'TRIES', 'TEXT'],
    (m) => [
      m.id,
      m.createdAt,
      statusOf(m),
      m.kind,
      m.to,
      m.sentTo,
      m.attempts,
      m.text ?? hiddenText(m),
    ],
  ),
  {
    name: 'mail show',
    options: valueOptions('id'),
    prepare: (args) => {
      const id = args.positiveInteger('id');
      return async (deps) => {
        const message = await mailDetail(deps, id);
        const facts: [string, string | number | null][] = [
          ['Tenant', message.tenantCode],
          ['Kind', `${message.kind} (${message.locale})`],
          ['Status', statusOf(message)],
          ['To', message.toName ? `${message.toName} <${message.to}>` : message.to],
          ['Sent to', message.sentTo],
          ['Subject', message.subject],
          ['Attempts', message.attempts],
          ['Created', message.createdAt],
          ['Last attempt', message.lastAttemptAt],
          ['Next attempt', message.nextAttemptAt],
          ['Sent', message.sentAt],
          ['Last error', message.lastError],
          ['Provider id', message.providerMessageId],
        ];
        return {
          json: { message },
          lines: [
            `E-mail ${message.id}`,
            ...facts.map(([label, value]) => `${`${label}:`.padEnd(14)}${value ?? '-'}`),
            '',
            message.text ?? hiddenText(message),
          ],
        };
      };
    },
  },
];
