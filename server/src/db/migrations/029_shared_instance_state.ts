import { postgresOf } from './sqlParts';

/**
 * What every server instance must see alike, moved out of DATA_DIR (issue 19: several instances
 * on one database):
 *
 * - `development_ca`: the development CA of `development` and `sandbox` (one row, id 1): its root
 *   and the development TSA's certificate (DER) and their private keys (PKCS#8 sealed with
 *   AES-256-GCM under the master secret's signing-keys key, as `signing_keys` keeps software
 *   keys). Two instances creating it at once insert with ON CONFLICT DO NOTHING on id 1 and both
 *   read back the row that won. Before this it lived in DATA_DIR/dev-ca, which the first start
 *   imports.
 * - `development_ca_issued`: every certificate that CA issued, by serial (lower-case hex, no
 *   leading zero byte): what its OCSP responder answers `good` for (was dev-ca/issued/*.der).
 * - `dev_outbox`: what the development mail and SMS transports (file mode) sent, by provider
 *   message id (the `.eml` path, `dev-file:<uuid>`), its content sealed under the master
 *   secret's encryption key (it holds OTPs and signing links in clear otherwise): the operator
 *   CLI and the tests read it whichever instance sent it.
 */
export const sharedInstanceState = `
CREATE TABLE development_ca (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  ca_certificate_der BLOB NOT NULL,
  ca_private_key TEXT NOT NULL,
  tsa_certificate_der BLOB NOT NULL,
  tsa_private_key TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE development_ca_issued (
  serial_hex TEXT PRIMARY KEY,
  certificate_der BLOB NOT NULL,
  issued_at TEXT NOT NULL
);
CREATE TABLE dev_outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  channel TEXT NOT NULL CHECK (channel IN ('mail', 'sms')),
  provider_message_id TEXT NOT NULL UNIQUE,
  recipient TEXT NOT NULL,
  sealed_content TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX dev_outbox_recipient ON dev_outbox(channel, recipient, id);
`;

export const sharedInstanceStatePostgres = postgresOf(sharedInstanceState);
