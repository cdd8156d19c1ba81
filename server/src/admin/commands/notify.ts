import { z } from 'zod';
import type { NotifyChannel } from '../../db/schema';
import { isEmailAddress, normalizePhone } from '../../notify/outbox';
import { lastOutboxMessages, mailDetail, type OutboxView } from '../../notify/views';
import { tenantByCode } from '../../tenancy/resolveTenant';
import { type Command, command, option, table } from '../command';

/** Outgoing mail and SMS: the operator's view of the notification outbox. */

const maxLimit = 200;

function statusOf(message: OutboxView): string {
  return message.sandbox ? `${message.status} (sandbox)` : message.status;
}

function hiddenText(message: OutboxView): string {
  return message.sensitive
    ? '[sensitive (a password, a code or a signing link): not shown]'
    : '[erased]';
}

/** `<channel> last [--limit N] [--to X] [--tenant T]`: the newest messages first. */
function lastCommand(
  channel: NotifyChannel,
  /** `--to`: the recipient as the outbox stores it. */
  toOption: z.ZodType<string | undefined, string | undefined>,
  header: string[],
  row: (message: OutboxView) => (string | number | null)[],
): Command {
  return command({
    name: `${channel} last`,
    options: z.object({
      limit: option.limit(maxLimit, 20),
      to: toOption,
      tenant: option.code.optional(),
    }),
    prepare: ({ limit, to, tenant: tenantCode }) => {
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
  });
}

export const notifyCommands: Command[] = [
  lastCommand(
    'mail',
    option.text
      .refine(isEmailAddress, { error: (issue) => `is not an e-mail address: ${issue.input}` })
      .optional(),
    ['ID', 'CREATED', 'STATUS', 'KIND', 'TO', 'SENT TO', 'TRIES', 'SUBJECT'],
    (m) => [m.id, m.createdAt, statusOf(m), m.kind, m.to, m.sentTo, m.attempts, m.subject],
  ),
  lastCommand(
    'sms',
    option.text
      .transform((to, context) => {
        const phone = normalizePhone(to);
        if (phone === null) {
          context.issues.push({
            code: 'custom',
            message: `is not a phone number: ${to}`,
            input: to,
          });
          return z.NEVER;
        }
        return phone;
      })
      .optional(),
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
  command({
    name: 'mail show',
    options: z.object({ id: option.positiveInteger }),
    prepare: ({ id }) => {
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
  }),
];
