/**
 * Notification e-mail and SMS: what the rest of the service calls.
 *
 * In a business transaction (no I/O), for one `notification.*` event:
 *
 *   const data = notificationData(event, facts);                       // webhooks/payloads
 *   const { deliveries } = await enqueueEvent(trx, deps, { tenantId, organizationId, type: event, data });
 *   await queueNotification(trx, deps, { tenantId, event, data, delegatedByWebhook: deliveries > 0 });
 *
 * queueNotification queues the e-mails the service sends itself (or the invitation SMS of a
 * phone-only signer); internal recipients always get theirs, external ones only when no
 * subscription took the event. For a single message:
 * - `queueMail(trx, deps, message)` / `queueSms(trx, deps, message)`: one message.
 *
 * In main.ts: `notifyKinds(deps)` run on the one job runner (jobs/), which sends what was queued.
 */

export type { MailTransport, OutgoingMail } from './mailTransport';
export {
  type ContractMailData,
  type ContractMailKind,
  contractMail,
  escapeHtml,
  formatInstant,
  invitationSms,
  type MessageOptions,
  type NotificationCredentials,
  type NotificationData,
  type NotificationEvent,
  type NotificationKind,
  type NotificationRecipient,
  type NotificationStep,
  notificationKind,
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
  notifyKinds,
  startNotifyWorker,
} from './worker';
