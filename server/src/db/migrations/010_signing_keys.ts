import { postgresOf } from './sqlParts';

/**
 * Keys the service signs with: the service seal and one key per cloud_hsm signer. A row holds
 * the public key and where the private key lives: in software, its PKCS#8 encrypted under a
 * key derived from the master secret; on a PKCS#11 token, the CKA_ID and label of a
 * non-extractable key. The certificate is null until issued (development CA) or imported
 * (production CSR flow); `certificate_chain` keeps the issuers that came with an import.
 *
 * One seal key per service and one signer key per (tenant, e-mail): the partial unique indexes
 * make two processes creating the same key at once keep one row.
 */
export const signingKeys = `
CREATE TABLE signing_keys (
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER REFERENCES tenants(id),
  purpose TEXT NOT NULL CHECK (purpose IN ('seal', 'signer')),
  owner_email TEXT,
  owner_email_key TEXT,
  owner_name TEXT,
  label TEXT NOT NULL UNIQUE,
  algorithm TEXT NOT NULL CHECK (algorithm IN ('rsa-2048', 'ec-p256')),
  store TEXT NOT NULL CHECK (store IN ('software', 'pkcs11')),
  public_key_spki BLOB NOT NULL,
  encrypted_private_key TEXT,
  pkcs11_id TEXT,
  pkcs11_token_label TEXT,
  certificate_der BLOB,
  certificate_chain TEXT,
  certificate_source TEXT CHECK (certificate_source IN ('development_ca', 'imported')),
  created_at TEXT NOT NULL,
  certificate_at TEXT,
  CHECK ((purpose = 'seal' AND tenant_id IS NULL AND owner_email IS NULL)
      OR (purpose = 'signer' AND tenant_id IS NOT NULL AND owner_email_key IS NOT NULL)),
  CHECK ((store = 'software' AND encrypted_private_key IS NOT NULL AND pkcs11_id IS NULL)
      OR (store = 'pkcs11' AND pkcs11_id IS NOT NULL AND encrypted_private_key IS NULL))
);
CREATE UNIQUE INDEX signing_keys_seal ON signing_keys(purpose) WHERE purpose = 'seal';
CREATE UNIQUE INDEX signing_keys_signer ON signing_keys(tenant_id, owner_email_key)
  WHERE purpose = 'signer';
`;

/** The same schema on PostgreSQL, translated by the common conventions. */
export const signingKeysPostgres = postgresOf(signingKeys);
