import {
  appendOnlyFunctionPostgres,
  appendOnlyTriggers,
  appendOnlyTriggersPostgres,
  auditChainColumns,
  postgresOf,
} from './sqlParts';

/**
 * Contracts (spec 03): contract types per tenant, contracts, their signers, their file versions
 * and their audit trail.
 *
 * - Every tenant has contract type 1 "Hợp đồng": a trigger gives it to each new tenant whoever
 *   creates it (API, CLI, fixtures); existing tenants get it here. `type_number` is the
 *   `contractTypeId` partners send, numbered per tenant.
 * - File versions: version 1 is the original (the uploaded PDF, or the PDF converted from a
 *   .docx); each signature adds one, naming the signer. Bytes live in the FileStore by SHA-256.
 * - Signers hold their turn state and the hash of their invitation token (the signing page link).
 * - Audit events are append-only (triggers refuse UPDATE and DELETE) and hash-chained per
 *   contract; `contracts.audit_head` repeats the newest hash, so a removed tail is noticed too.
 * - `search_key` is the title folded (lower case, diacritics removed), written by the one insert.
 */
/** A contract file version's columns after its kind; migration 021 rebuilds the table with them. */
export const fileVersionColumns = `  sha256 TEXT NOT NULL,
  size INTEGER NOT NULL,
  mime_type TEXT NOT NULL,
  signer_id INTEGER REFERENCES contract_signers(id),
  created_at TEXT NOT NULL,
  UNIQUE (contract_id, version),`;

const contractTypes = `CREATE TABLE contract_types (
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id),
  type_number INTEGER NOT NULL CHECK (type_number > 0),
  name TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (tenant_id, type_number)
);`;

/** Every new tenant gets contract type 1 (SQLite's trigger; PostgreSQL's is a function). */
const defaultContractType = `CREATE TRIGGER tenants_default_contract_type AFTER INSERT ON tenants BEGIN
  INSERT INTO contract_types (tenant_id, type_number, name, created_at)
  VALUES (NEW.id, 1, 'Hợp đồng', NEW.created_at);
END;`;

const contractTables = `INSERT INTO contract_types (tenant_id, type_number, name, created_at)
  SELECT id, 1, 'Hợp đồng', created_at FROM tenants;

CREATE TABLE contracts (
  id INTEGER PRIMARY KEY,
  uuid TEXT NOT NULL UNIQUE,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id),
  organization_id INTEGER REFERENCES organizations(id),
  contract_type_id INTEGER NOT NULL REFERENCES contract_types(id),
  title TEXT NOT NULL,
  search_key TEXT NOT NULL,
  description TEXT,
  status TEXT NOT NULL CHECK (status IN ('draft', 'signing', 'completed', 'rejected', 'expired', 'cancelled')),
  source_name TEXT NOT NULL,
  source_kind TEXT NOT NULL CHECK (source_kind IN ('pdf', 'docx')),
  created_by_user_id INTEGER NOT NULL REFERENCES users(id),
  expired_at TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  sent_at TEXT,
  completed_at TEXT,
  rejected_at TEXT,
  cancelled_at TEXT,
  cancel_reason TEXT,
  ended_at TEXT,
  audit_head TEXT NOT NULL
);
CREATE INDEX contracts_tenant_created ON contracts(tenant_id, created_at);
CREATE INDEX contracts_creator_created ON contracts(created_by_user_id, created_at);
-- The expiry pass reads only contracts that can still expire.
CREATE INDEX contracts_open_deadline ON contracts(expired_at) WHERE status IN ('draft', 'signing');

CREATE TABLE contract_signers (
  id INTEGER PRIMARY KEY,
  contract_id INTEGER NOT NULL REFERENCES contracts(id),
  position INTEGER NOT NULL,
  signing_order INTEGER NOT NULL CHECK (signing_order > 0),
  role TEXT NOT NULL CHECK (role IN ('signer', 'viewer')),
  name TEXT NOT NULL,
  email TEXT NOT NULL,
  email_key TEXT NOT NULL,
  phone TEXT,
  status TEXT NOT NULL CHECK (status IN ('waiting', 'invited', 'signed', 'rejected')),
  invited_at TEXT,
  invitation_token_hash TEXT UNIQUE,
  invitation_expires_at TEXT,
  signed_at TEXT,
  method TEXT CHECK (method IN ('usb_token', 'cloud_hsm', 'otp_sms', 'image_signature')),
  UNIQUE (contract_id, email_key),
  UNIQUE (contract_id, position)
);
CREATE INDEX contract_signers_turn ON contract_signers(contract_id, signing_order);

CREATE TABLE contract_file_versions (
  id INTEGER PRIMARY KEY,
  contract_id INTEGER NOT NULL REFERENCES contracts(id),
  version INTEGER NOT NULL CHECK (version > 0),
${fileVersionColumns}
  CHECK ((version = 1) = (signer_id IS NULL))
);

CREATE TABLE contract_audit_events (
  id INTEGER PRIMARY KEY,
  contract_id INTEGER NOT NULL REFERENCES contracts(id),
  seq INTEGER NOT NULL CHECK (seq > 0),
  action TEXT NOT NULL,
  at TEXT NOT NULL,
  actor_kind TEXT NOT NULL CHECK (actor_kind IN ('user', 'signer', 'system')),
  actor_user_id INTEGER REFERENCES users(id),
  actor_signer_id INTEGER REFERENCES contract_signers(id),
${auditChainColumns}
  UNIQUE (contract_id, seq)
);`;

export const contracts = `
${contractTypes}
${defaultContractType}
${contractTables}
${appendOnlyTriggers('contract_audit_events', 'contract audit events')}
`;

/**
 * The same on PostgreSQL: the tables translated, the default contract type by a trigger function
 * and the append-only triggers by migration 013's `esign_append_only`.
 */
export const contractsPostgres = `
${postgresOf(contractTypes)}
CREATE FUNCTION esign_tenants_default_contract_type() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO contract_types (tenant_id, type_number, name, created_at)
  VALUES (NEW.id, 1, 'Hợp đồng', NEW.created_at);
  RETURN NULL;
END $$;
CREATE TRIGGER tenants_default_contract_type AFTER INSERT ON tenants
  FOR EACH ROW EXECUTE FUNCTION esign_tenants_default_contract_type();
${postgresOf(contractTables)}
${appendOnlyFunctionPostgres}
${appendOnlyTriggersPostgres('contract_audit_events', 'contract audit events')}
`;
