import { postgresOf } from './sqlParts';

/**
 * Trust anchors: CA certificates that signer and TSA certificates must chain to. A row with no
 * tenant is global (every tenant trusts it); a tenant's own rows add to the global ones. The
 * same certificate (SHA-256 fingerprint) is kept once per scope; SQLite treats NULLs as
 * distinct in a unique index, so the global scope has its own partial index.
 */
export const trustAnchors = `
CREATE TABLE trust_anchors (
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER REFERENCES tenants(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  certificate BLOB NOT NULL,
  subject TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX trust_anchors_tenant_fingerprint ON trust_anchors(tenant_id, fingerprint)
  WHERE tenant_id IS NOT NULL;
CREATE UNIQUE INDEX trust_anchors_global_fingerprint ON trust_anchors(fingerprint)
  WHERE tenant_id IS NULL;
`;

/** The same schema on PostgreSQL, translated by the common conventions. */
export const trustAnchorsPostgres = postgresOf(trustAnchors);
