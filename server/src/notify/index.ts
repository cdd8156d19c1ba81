/**
 * Notification e-mail and SMS: what the rest of the service calls.
 *
 * In a business transaction (no I/O):
 * - `queueNotification(trx, deps, { tenantId, kind, data, delegatedByWebhook })`: the e-mails
 *   (or the invitation SMS of a phone-only signer) of one `notification.*` event, from the same
 *   `data` object as the webhook event;
 * - `queueMail(trx, deps, message)` / `queueSms(trx, deps, message)`: one message.
 *
 * In main.ts: `startNotifyWorker(deps)` sends what was queued; `stop()` on shutdown.
 */

export type { MailTransport, OutgoingMail } from './mailTransport';
export {
  escapeHtml,
  formatInstant,
  invitationSms,
  type MessageOptions,
  type NotificationCredentials,
  type NotificationData,
  type NotificationKind,
  type NotificationRecipient,
  type NotificationStep,
  notificationKinds,
  notificationMail,
  otpSms,
  processFinishedMail,
  type RenderedMail,
  taskAssignedExternalMail,
  taskAssignedInternalMail,
  taskRejectedMail,
} from './messages';
export {
  type NotificationInput,
  type NotificationOutcome,
  queueNotification,
} from './notifications';
export {
  type MailMessage,
  type QueuedMessage,
  queueMail,
  queueSms,
  type SmsMessage,
} from './outbox';
export { shouldSendEmail } from './policy';
export type { SmsProvider } from './sms';
export {
  defaultRetryDelaysMs,
  type NotifyWorker,
  type NotifyWorkerOptions,
  startNotifyWorker,
  type Timers,
} from './worker';
