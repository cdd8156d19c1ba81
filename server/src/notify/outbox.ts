import type { AppDeps } from '../context';
import type { Db } from '../db/database';
import type { NotifyChannel, NotifyRoute, NotifyStatus } from '../db/schema';
import { DomainError } from '../errors/domainError';
import { enqueue } from '../jobs/queue';
import { isoNow } from '../platform/clock';
import type { NotifyLocale } from '../platform/config';
import { encryptSecret } from '../platform/secrets';
import { withSandboxNotice, withSandboxSmsNotice } from './messages';
import { developerContact, insertMessage } from './queries';

/**
 * Writing to the notification outbox. `queueMail` and `queueSms` run INSIDE the caller's
 * transaction and do no I/O: the message commits or rolls back with the business change that
 * caused it, and its job (jobs/) sends it later. Routing (sandbox) is decided here, at queue
 * time, and recorded in the row.
 */

export type QueueDeps = Pick<AppDeps, 'config' | 'clock' | 'secrets' | 'db'>;

/** The job kind of each channel: mail and SMS run with their own concurrency. */
export const notifyJobKinds = { mail: 'notify.mail', sms: 'notify.sms' } as const;

/** Delays after the 1st, 2nd, … failed attempt (10 s, 1 min, 5 min, 30 min, 2 h). */
export const defaultRetryDelaysMs = [10_000, 60_000, 300_000, 1_800_000, 7_200_000];
/** Six attempts in all. */
export const notifyMaxAttempts = defaultRetryDelaysMs.length + 1;

export interface MailMessage {
  tenantId: number;
  /** What the message is, e.g. `task_assigned_external` (shown by the CLI). */
  kind: string;
  to: string;
  toName?: string | null;
  subject: string;
  text: string;
  html: string;
  /** Recorded; the caller renders in it. Defaults to NOTIFY_LOCALE. */
  locale?: NotifyLocale;
  /** Holds a password or an OTP: the body is stored encrypted and erased once final. */
  sensitive?: boolean;
}

export interface SmsMessage {
  tenantId: number;
  kind: string;
  to: string;
  text: string;
  locale?: NotifyLocale;
  sensitive?: boolean;
  /** Not sent after this instant (an OTP that has expired): the message fails instead. */
  discardAfter?: Date;
}

export interface QueuedMessage {
  id: number;
  channel: NotifyChannel;
  /** pending (the worker will send it) or suppressed (sandbox without a developer address). */
  status: Extract<NotifyStatus, 'pending' | 'suppressed'>;
  /** Who will receive it: the recipient, or the developer account in sandbox mode; null if nobody. */
  sendTo: string | null;
  sandbox: boolean;
}

const emailPattern = /^[^\s@<>()[\],;:"\\]+@[^\s@<>()[\],;:"\\]+$/;

/** A single address as it can stand in a To header; no name part, no line breaks. */
export function isEmailAddress(value: string): boolean {
  return value.length <= 254 && emailPattern.test(value);
}

/** Spaces, dots, dashes and brackets dropped; then 8 to 15 digits with an optional `+`. */
export function normalizePhone(value: string): string | null {
  const compact = value.replace(/[\s.\-()]/g, '');
  return /^\+?\d{8,15}$/.test(compact) ? compact : null;
}

function invalid(field: string, message: string): DomainError {
  return new DomainError('VALIDATION_ERROR', message, { field });
}

interface Route {
  sendTo: string | null;
  route: NotifyRoute;
  sandbox: boolean;
}

/**
 * Sandbox mode: e-mail goes only to the tenant's developer address, or to nobody (suppressed);
 * SMS only to the developer phone, or to the development file outbox when there is none.
 */
async function routeFor(
  trx: Db,
  deps: QueueDeps,
  channel: NotifyChannel,
  tenantId: number,
  to: string,
): Promise<Route> {
  if (!deps.config.sandbox) return { sendTo: to, route: 'configured', sandbox: false };
  const tenant = await developerContact(trx, tenantId);
  if (channel === 'mail') {
    const address = tenant?.developer_email?.trim();
    return address && isEmailAddress(address)
      ? { sendTo: address, route: 'configured', sandbox: true }
      : { sendTo: null, route: 'none', sandbox: true };
  }
  const phone = normalizePhone(tenant?.developer_phone ?? '');
  return phone
    ? { sendTo: phone, route: 'configured', sandbox: true }
    : { sendTo: to, route: 'dev_file', sandbox: true };
}

function sealed(deps: QueueDeps, sensitive: boolean, body: string): string {
  return sensitive ? encryptSecret(deps.secrets, body) : body;
}

async function insert(
  trx: Db,
  deps: QueueDeps,
  channel: NotifyChannel,
  routing: Route,
  values: {
    tenantId: number;
    kind: string;
    recipient: string;
    recipientName: string | null;
    locale: NotifyLocale | undefined;
    subject: string | null;
    text: string;
    html: string | null;
    sensitive: boolean;
    discardAfter: Date | undefined;
  },
): Promise<QueuedMessage> {
  const now = isoNow(deps.clock);
  const status = routing.route === 'none' ? 'suppressed' : 'pending';
  // A suppressed message is final at once: a sensitive body is not kept.
  const keepBody = !(values.sensitive && status === 'suppressed');
  // A suppressed message is never sent: it gets no job.
  const jobId =
    status === 'pending'
      ? await enqueue(trx, deps, { kind: notifyJobKinds[channel], maxAttempts: notifyMaxAttempts })
      : null;
  const id = await insertMessage(trx, {
    channel,
    tenant_id: values.tenantId,
    kind: values.kind,
    locale: values.locale ?? deps.config.notify.locale,
    recipient: values.recipient,
    recipient_name: values.recipientName,
    send_to: routing.sendTo,
    route: routing.route,
    sandbox: routing.sandbox ? 1 : 0,
    subject: values.subject,
    text_body: keepBody ? sealed(deps, values.sensitive, values.text) : null,
    html_body:
      keepBody && values.html !== null ? sealed(deps, values.sensitive, values.html) : null,
    sensitive: values.sensitive ? 1 : 0,
    discard_after: values.discardAfter?.toISOString() ?? null,
    created_at: now,
    job_id: jobId,
  });
  return { id, channel, status, sendTo: routing.sendTo, sandbox: routing.sandbox };
}

/**
 * Queues one e-mail inside the caller's transaction `trx`. In sandbox mode it is addressed to the
 * tenant's developer address instead, with `[SANDBOX]` in the subject and a line naming the real
 * recipient in both parts (and an `X-Original-To` header when sent), or suppressed when the
 * tenant has no developer address. Throws 400 VALIDATION_ERROR for an unusable address.
 */
export async function queueMail(
  trx: Db,
  deps: QueueDeps,
  message: MailMessage,
): Promise<QueuedMessage> {
  const to = message.to.trim();
  if (!isEmailAddress(to)) throw invalid('to', `Not an e-mail address: "${message.to}"`);
  if (/[\r\n]/.test(message.subject)) throw invalid('subject', 'A subject is one line');
  const routing = await routeFor(trx, deps, 'mail', message.tenantId, to);
  const locale = message.locale ?? deps.config.notify.locale;
  const content = routing.sandbox ? withSandboxNotice(message, locale, to) : message;
  return insert(trx, deps, 'mail', routing, {
    tenantId: message.tenantId,
    kind: message.kind,
    recipient: to,
    recipientName: message.toName?.trim() || null,
    locale,
    subject: content.subject,
    text: content.text,
    html: content.html,
    sensitive: message.sensitive ?? false,
    discardAfter: undefined,
  });
}

/**
 * Queues one SMS inside the caller's transaction `trx`. In sandbox mode it goes to the tenant's
 * developer phone instead (text prefixed with the real number), or to the development file
 * outbox when the tenant has none. Throws 400 VALIDATION_ERROR for an unusable number.
 */
export async function queueSms(
  trx: Db,
  deps: QueueDeps,
  message: SmsMessage,
): Promise<QueuedMessage> {
  const to = normalizePhone(message.to);
  if (to === null) throw invalid('to', `Not a phone number: "${message.to}"`);
  const routing = await routeFor(trx, deps, 'sms', message.tenantId, to);
  return insert(trx, deps, 'sms', routing, {
    tenantId: message.tenantId,
    kind: message.kind,
    recipient: to,
    recipientName: null,
    locale: message.locale,
    subject: null,
    text: routing.sandbox ? withSandboxSmsNotice(message.text, to) : message.text,
    html: null,
    sensitive: message.sensitive ?? false,
    discardAfter: message.discardAfter,
  });
}
