import type { Db } from '../db/database';
import type { NotifyLocale } from '../platform/config';
import {
  invitationSms,
  type NotificationData,
  type NotificationEvent,
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
 * Queues, inside the caller's transaction, the e-mails the service itself sends for one
 * `notification.*` event: one per recipient with an e-mail address (rendered in the recipient's
 * language of the tenant, with their own credentials), none for external recipients when the
 * event is delegated to a webhook. An outside signer invited by phone only (`email` null) gets
 * the invitation by SMS instead. A recipient listed twice gets one message.
 */
export async function queueNotification(
  trx: Db,
  deps: QueueDeps,
  input: NotificationInput,
): Promise<NotificationOutcome> {
  const kind = notificationKind(input.event);
  const locale = input.locale ?? deps.config.notify.locale;
  const options = { locale, serviceName: deps.config.serviceName };
  const outcome: NotificationOutcome = { queued: [], skipped: [] };
  const seen = new Set<string>();
  for (const recipient of input.data.recipients) {
    const recipientName = recipient.name;
    const skip = (reason: SkipReason) => outcome.skipped.push({ recipientName, reason });
    if (
      !shouldSendEmail({
        recipientType: recipient.type,
        delegatedByWebhook: input.delegatedByWebhook,
      })
    ) {
      skip('delegated_to_webhook');
      continue;
    }
    const email = recipient.email?.trim() ?? '';
    const phone = normalizePhone(recipient.phone ?? '');
    const address = isEmailAddress(email)
      ? `mail:${email.toLowerCase()}`
      : phone && recipient.type === 'external' && kind === 'task_assigned_external'
        ? `sms:${phone}`
        : null;
    if (address === null) {
      skip('no_usable_address');
      continue;
    }
    if (seen.has(address)) {
      skip('duplicate_address');
      continue;
    }
    seen.add(address);
    if (address.startsWith('mail:')) {
      const rendered = notificationMail[kind](input.data, recipient, options);
      const queued = await queueMail(trx, deps, {
        tenantId: input.tenantId,
        kind,
        to: email,
        toName: recipient.name,
        ...rendered,
        locale,
      });
      outcome.queued.push({ ...queued, recipientName });
    } else {
      const credentials = recipient.type === 'external' ? recipient.credentials : null;
      const message = invitationSms(locale, deps.config.serviceName, input.data, credentials);
      const queued = await queueSms(trx, deps, {
        tenantId: input.tenantId,
        kind,
        to: phone!,
        ...message,
        locale,
      });
      outcome.queued.push({ ...queued, recipientName });
    }
  }
  return outcome;
}
