import { postgresOf } from './sqlParts';

/**
 * Signing sessions of contracts (spec 03, /api/signing): one row per initiate.
 *
 * - `public_id` is the `sessionId` partners see: 256 random bits, base64url.
 * - `preparation_id` is the engine's prepared revision the session signs; a server-key confirm
 *   may replace it (re-prepared from the newest version), the session follows.
 * - The signing link (`link_token_hash`) opens the signing page once; the page exchanges it for
 *   a page credential (`page_token_hash`) good for this session's steps only. Both tokens are
 *   stored as keyed hashes, never in clear.
 * - The OTP is stored as an HMAC under a per-session derived key; `otp_failures` counts wrong
 *   codes over the whole session (a resend does not reset it).
 * - At most one open session per signer: a new initiate supersedes the open one (unique index).
 * - `contract_signers.placement` is the signer's visible-signature box from contract creation
 *   (JSON `{page?, x, y, width, height}`), null for the default box.
 */
/** A session's columns after its subject; migration 016 rebuilds the table with them. */
export const sessionColumns = `  method TEXT NOT NULL CHECK (method IN ('usb_token', 'cloud_hsm', 'otp_sms', 'image_signature')),
  preparation_id INTEGER NOT NULL REFERENCES signature_preparations(id),
  source_version INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('open', 'signed', 'rejected', 'superseded', 'locked')),
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  ended_at TEXT,
  link_token_hash TEXT NOT NULL UNIQUE,
  link_expires_at TEXT NOT NULL,
  link_used_at TEXT,
  page_token_hash TEXT UNIQUE,
  otp_hash TEXT,
  otp_expires_at TEXT,
  otp_sent_at TEXT,
  otp_failures INTEGER NOT NULL DEFAULT 0,
  signature_id TEXT UNIQUE,
  signed_at TEXT,
  certificate_info TEXT`;

export const signingSessions = `
ALTER TABLE contract_signers ADD COLUMN placement TEXT;

CREATE TABLE signing_sessions (
  id INTEGER PRIMARY KEY,
  public_id TEXT NOT NULL UNIQUE,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id),
  contract_id INTEGER NOT NULL REFERENCES contracts(id),
  signer_id INTEGER NOT NULL REFERENCES contract_signers(id),
${sessionColumns}
);
CREATE UNIQUE INDEX signing_sessions_one_open ON signing_sessions(signer_id) WHERE state = 'open';
CREATE INDEX signing_sessions_contract ON signing_sessions(contract_id);
`;

export const signingSessionsPostgres = postgresOf(signingSessions);
