import { postgresOf } from './sqlParts';

/**
 * The notification outbox: e-mails and SMS the service sends itself. A row is written in the
 * caller's transaction (with the business change that caused it) and sent later by the notify
 * worker, which leases due rows (`lease_id` is the allocation id compared on completion,
 * `lease_expires_at` lets another worker take a row whose sender died).
 *
 * `recipient` is who the message is meant for; `send_to` who actually gets it (the developer
 * account in sandbox mode), null when the message is suppressed. Bodies of sensitive messages
 * (OTPs, passwords) are stored encrypted and erased once the message is final.
 */
export const notifyOutbox = `
CREATE TABLE notify_outbox (
  id INTEGER PRIMARY KEY,
  channel TEXT NOT NULL CHECK (channel IN ('mail', 'sms')),
  tenant_id INTEGER NOT NULL REFERENCES tenants(id),
  kind TEXT NOT NULL,
  locale TEXT NOT NULL CHECK (locale IN ('vi', 'en')),
  recipient TEXT NOT NULL,
  recipient_name TEXT,
  send_to TEXT,
  route TEXT NOT NULL CHECK (route IN ('configured', 'dev_file', 'none')),
  sandbox INTEGER NOT NULL DEFAULT 0,
  subject TEXT,
  text_body TEXT,
  html_body TEXT,
  sensitive INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'failed', 'suppressed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  discard_after TEXT,
  lease_id TEXT,
  lease_expires_at TEXT,
  last_error TEXT,
  provider_message_id TEXT,
  created_at TEXT NOT NULL,
  last_attempt_at TEXT,
  sent_at TEXT
);
-- The worker's claim reads due pending rows in order.
CREATE INDEX notify_outbox_due ON notify_outbox(next_attempt_at) WHERE status = 'pending';
-- The CLI lists the newest messages of one channel, optionally of one recipient.
CREATE INDEX notify_outbox_channel_created ON notify_outbox(channel, id);
CREATE INDEX notify_outbox_recipient ON notify_outbox(recipient, id);
`;

/** The same schema on PostgreSQL, translated by the common conventions. */
export const notifyOutboxPostgres = postgresOf(notifyOutbox);
