import type { AppDeps } from '../context';
import type { NotifyChannel } from '../db/schema';
import { isoNow } from '../platform/clock';
import { decryptSecret, encryptSecret } from '../platform/secrets';
import { devOutboxByProviderIds, devOutboxOf, insertDevOutbox } from './queries';

/**
 * The development outbox (MAIL_TRANSPORT and SMS_PROVIDER in file mode): what was "sent" is kept
 * in the database (dev_outbox), so the operator CLI and the tests read it whichever instance
 * sent it. Its content is sealed under the master secret's encryption key (as webhook secrets
 * are): it holds OTPs and signing links, which the notify outbox erases once sent. The `.eml`
 * files and messages.jsonl under DATA_DIR are still written, a per-instance copy for a developer
 * on one host.
 */
export type DevOutboxDeps = Pick<AppDeps, 'db' | 'secrets' | 'clock'>;

export interface DevOutboxEntry {
  channel: NotifyChannel;
  /** The id the transport answers with: the `.eml` path, `dev-file:<uuid>`. */
  providerMessageId: string;
  /** The address or phone number it went to. */
  recipient: string;
  /** The whole `.eml` message, or the SMS text. */
  content: string;
}

/** Keeps a message the development transport sent. */
export type KeepDevMessage = (entry: DevOutboxEntry) => Promise<void>;

export function devOutboxKeeper(deps: DevOutboxDeps): KeepDevMessage {
  return (entry) =>
    insertDevOutbox(deps.db, {
      channel: entry.channel,
      provider_message_id: entry.providerMessageId,
      recipient: entry.recipient,
      sealed_content: encryptSecret(deps.secrets, entry.content),
      created_at: isoNow(deps.clock),
    });
}

/** The content of each kept message among `providerMessageIds`, by provider id. */
export async function devOutboxContents(
  deps: Pick<AppDeps, 'db' | 'secrets'>,
  providerMessageIds: readonly string[],
): Promise<Map<string, string>> {
  const rows = await devOutboxByProviderIds(deps.db, providerMessageIds);
  return new Map(
    rows.map((row) => [row.provider_message_id, decryptSecret(deps.secrets, row.sealed_content)]),
  );
}

/** The kept messages of a channel (to one recipient, or all), newest first. */
export async function devOutboxMessages(
  deps: Pick<AppDeps, 'db' | 'secrets'>,
  channel: NotifyChannel,
  recipient?: string,
): Promise<(DevOutboxEntry & { createdAt: string })[]> {
  const rows = await devOutboxOf(deps.db, channel, recipient);
  return rows.map((row) => ({
    channel: row.channel,
    providerMessageId: row.provider_message_id,
    recipient: row.recipient,
    content: decryptSecret(deps.secrets, row.sealed_content),
    createdAt: row.created_at,
  }));
}
