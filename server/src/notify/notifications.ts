import type { Db } from '../db/database';
import type { NotifyLocale } from '../platform/config';
import {
  invitationSms,
  type NotificationData,
  type NotificationEvent,
  type NotificationKind,
  type NotificationRecipient,
  notificationKind,
  notificationMail,
} from './messages';
import {
  isEmailAddress,
  normalizePhone,
  type QueueDeps,
  type QueuedMessage,
  queueMail,
  queueSms,
} from './outbox';
import { shouldSendEmail } from './policy';

export interface NotificationInput {
  tenantId: number;
  /** The webhook event type, e.g. `notification.task_assigned_external`. */
  event: NotificationEvent;
  /** The same object as the `data` of that webhook event (webhooks/payloads `notificationData`). */
  data: NotificationData;
  /**
   * True when an active subscription of the organization takes this event: `enqueueEvent`
   * fanned it out to at least one subscription (`deliveries > 0`).
   */
  delegatedByWebhook: boolean;
  /** Defaults to NOTIFY_LOCALE. */
  locale?: NotifyLocale;
}

export type SkipReason = 'delegated_to_webhook' | 'no_usable_address' | 'duplicate_address';

export interface NotificationOutcome {
  queued: (QueuedMessage & { recipientName: string })[];
  skipped: { recipientName: string; reason: SkipReason }[];
}

/**
 * How the service reaches one recipient itself: by e-mail when the address is usable; an outside
 * signer invited by phone only gets the invitation (and only it) by SMS; otherwise not at all.
 */
function channelOf(
  recipient: NotificationRecipient,
  kind: NotificationKind,
): { channel: 'mail' | 'sms'; to: string } | null {
  const email = recipient.email?.trim() ?? '';
  if (isEmailAddress(email)) return { channel: 'mail', to: email };
  const phone = normalizePhone(recipient.phone ?? '');
  if (phone !== null && recipient.type === 'external' && kind === 'task_assigned_external') {
    return { channel: 'sms', to: phone };
  }
  return null;
}

/**
 * Queues, inside the caller's transaction, the e-mails the service itself sends for one
 * `notification.*` event: one per recipient with an e-mail address (rendered in the tenant's
 * language, with the recipient's own credentials), none for external recipients when the event
 * is delegated to a webhook. An outside signer invited by phone only (`email` null) gets the
 * invitation by SMS instead. A recipient listed twice gets one message.
 */
export async function queueNotification(
  trx: Db,
  deps: QueueDeps,
  input: NotificationInput,
): Promise<NotificationOutcome> {
  const kind = notificationKind(input.event);
  const locale = input.locale ?? deps.config.notify.locale;
  const { tenantId, delegatedByWebhook } = input;
  const outcome: NotificationOutcome = { queued: [], skipped: [] };
  const seen = new Set<string>();
  for (const recipient of input.data.recipients) {
    const recipientName = recipient.name;
    const skip = (reason: SkipReason) => outcome.skipped.push({ recipientName, reason });
    if (!shouldSendEmail({ recipientType: recipient.type, delegatedByWebhook })) {
      skip('delegated_to_webhook');
      continue;
    }
    const target = channelOf(recipient, kind);
    if (target === null) {
      skip('no_usable_address');
      continue;
    }
    const key = `${target.channel}:${target.to.toLowerCase()}`;
    if (seen.has(key)) {
      skip('duplicate_address');
      continue;
    }
    seen.add(key);
    const queued =
      target.channel === 'mail'
        ? await queueMail(trx, deps, {
            tenantId,
            kind,
            to: target.to,
            toName: recipientName,
            locale,
            ...notificationMail[kind](input.data, recipient, {
              locale,
              serviceName: deps.config.serviceName,
            }),
          })
        : await queueSms(trx, deps, {
            tenantId,
            kind,
            to: target.to,
            locale,
            ...invitationSms(
              locale,
              deps.config.serviceName,
              input.data,
              recipient.type === 'external' ? recipient.credentials : null,
            ),
          });
    outcome.queued.push({ ...queued, recipientName });
  }
  return outcome;
}
