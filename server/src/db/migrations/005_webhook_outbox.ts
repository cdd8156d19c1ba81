import { postgresOf } from './sqlParts';

/**
 * The webhook outbox. An event row holds the body exactly as it is sent (canonical JSON bytes of
 * the envelope, produced once); a delivery row is one event for one subscription (fan-out), with
 * its retry state and lease; an attempt row records each try. The worker finds due work through
 * the index on (status, next_attempt_at), in due order.
 *
 * Subscriptions gain a previous secret that stays valid until a grace deadline (rotation), and
 * the sandbox receiver (endpoint 18) keeps what it was sent in its own bounded table.
 */
export const webhookOutbox = `
ALTER TABLE webhook_subscriptions ADD COLUMN previous_secret_encrypted TEXT;
ALTER TABLE webhook_subscriptions ADD COLUMN previous_secret_expires_at TEXT;

CREATE TABLE webhook_events (
  id TEXT PRIMARY KEY,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id),
  organization_id INTEGER NOT NULL REFERENCES organizations(id),
  type TEXT NOT NULL,
  body BLOB NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE webhook_deliveries (
  id INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL REFERENCES webhook_events(id),
  subscription_id TEXT NOT NULL REFERENCES webhook_subscriptions(id),
  tenant_id INTEGER NOT NULL REFERENCES tenants(id),
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  next_attempt_at TEXT NOT NULL,
  lease_id TEXT,
  lease_expires_at TEXT,
  last_http_status INTEGER,
  last_error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  finished_at TEXT,
  UNIQUE (event_id, subscription_id)
);
-- The worker's claim: equality on status, range and order on next_attempt_at (then rowid).
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at);
CREATE INDEX webhook_deliveries_tenant ON webhook_deliveries(tenant_id, id);
CREATE INDEX webhook_deliveries_status ON webhook_deliveries(status, id);

CREATE TABLE webhook_attempts (
  id INTEGER PRIMARY KEY,
  delivery_id INTEGER NOT NULL REFERENCES webhook_deliveries(id),
  number INTEGER NOT NULL,
  lease_id TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  http_status INTEGER,
  latency_ms INTEGER,
  error TEXT,
  response_excerpt TEXT,
  UNIQUE (delivery_id, number)
);

CREATE TABLE webhook_test_requests (
  id INTEGER PRIMARY KEY,
  tag TEXT NOT NULL,
  received_at TEXT NOT NULL,
  remote_address TEXT,
  headers TEXT NOT NULL,
  body BLOB NOT NULL,
  body_bytes INTEGER NOT NULL,
  truncated INTEGER NOT NULL
);
CREATE INDEX webhook_test_requests_tag ON webhook_test_requests(tag, id);
`;

/** The same schema on PostgreSQL, translated by the common conventions. */
export const webhookOutboxPostgres = postgresOf(webhookOutbox);
