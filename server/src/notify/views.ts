import type { AppDeps } from '../context';
import type { NotifyChannel } from '../db/schema';
import { DomainError } from '../errors/domainError';
import { devOutboxContents } from './devOutbox';
import { parseDevMail, readDevMailFile } from './mailTransport';
import { lastMessages, messageById, type OutboxFilter, type OutboxRowWithTenant } from './queries';
import { devSmsIdPrefix, readDevSms } from './sms';

/**
 * What the operator sees of the outbox. A sensitive body (a password, an OTP, a signing link) is
 * never shown from the notify outbox (it is erased once sent); one the development transports
 * sent is shown from the development outbox (devOutbox.ts, whichever instance sent it), or for
 * a message sent before that existed, from this instance's file (an SMS line, an `.eml` file).
 */
export interface OutboxView {
  id: number;
  channel: NotifyChannel;
  tenantCode: string;
  kind: string;
  locale: string;
  status: string;
  /** Who the message is meant for. */
  to: string;
  toName: string | null;
  /** Who receives it (the developer account in sandbox mode); null when suppressed. */
  sentTo: string | null;
  sandbox: boolean;
  /** configured, dev_file (sandbox SMS without a developer phone) or none. */
  route: string;
  attempts: number;
  createdAt: string;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  sentAt: string | null;
  lastError: string | null;
  /** SMTP Message-ID, the .eml file's path, or the SMS gateway's id. */
  providerMessageId: string | null;
  subject: string | null;
  sensitive: boolean;
  /** The text (the plain-text part of an e-mail); null when hidden or erased. */
  text: string | null;
}

export interface MailDetailView extends OutboxView {
  html: string | null;
}

function view(row: OutboxRowWithTenant, devText: string | undefined): OutboxView {
  const shown = row.sensitive === 1 ? (devText ?? null) : row.text_body;
  return {
    id: row.id,
    channel: row.channel,
    tenantCode: row.tenant_code,
    kind: row.kind,
    locale: row.locale,
    status: row.status,
    to: row.recipient,
    toName: row.recipient_name,
    sentTo: row.send_to,
    sandbox: row.sandbox === 1,
    route: row.route,
    attempts: row.attempts,
    createdAt: row.created_at,
    lastAttemptAt: row.last_attempt_at,
    nextAttemptAt: row.status === 'pending' ? row.next_attempt_at : null,
    sentAt: row.sent_at,
    lastError: row.last_error,
    providerMessageId: row.provider_message_id,
    subject: row.subject,
    sensitive: row.sensitive === 1,
    text: shown,
  };
}

/** The newest messages of a channel, newest first. */
export async function lastOutboxMessages(
  deps: Pick<AppDeps, 'db' | 'config' | 'secrets'>,
  filter: OutboxFilter,
): Promise<OutboxView[]> {
  const rows = await lastMessages(deps.db, filter);
  const devIds = rows.flatMap((row) =>
    row.sensitive === 1 && row.provider_message_id?.startsWith(devSmsIdPrefix)
      ? [row.provider_message_id]
      : [],
  );
  const kept = await devOutboxContents(deps, devIds);
  const devLines = devIds.some((id) => !kept.has(id))
    ? readDevSms(deps.config.notify.smsDir)
    : new Map<string, { text: string }>();
  return rows.map((row) => {
    const id = row.provider_message_id ?? '';
    return view(row, kept.get(id) ?? devLines.get(id.slice(devSmsIdPrefix.length))?.text);
  });
}

/** One e-mail with both parts (a sensitive one only from the development outbox). */
export async function mailDetail(
  deps: Pick<AppDeps, 'db' | 'config' | 'secrets'>,
  id: number,
): Promise<MailDetailView> {
  const row = await messageById(deps.db, 'mail', id);
  if (!row) throw new DomainError('NOTIFY_MESSAGE_NOT_FOUND', `No e-mail ${id} in the outbox`);
  if (row.sensitive !== 1) return { ...view(row, undefined), html: row.html_body };
  const providerId = row.provider_message_id;
  const kept =
    providerId === null ? undefined : (await devOutboxContents(deps, [providerId])).get(providerId);
  const source = kept ?? readDevMailFile(deps.config.notify.mailDir, providerId);
  const devMail = source === undefined ? undefined : parseDevMail(source);
  return { ...view(row, devMail?.text ?? undefined), html: devMail?.html ?? null };
}
