import { postgresOf } from './sqlParts';

/**
 * Prepared PDF revisions waiting for a signature. A row names the stored file it was prepared
 * from (`source_sha256`), the prepared file with its empty /Contents placeholder
 * (`prepared_sha256`, in the FileStore), where the placeholder sits and the digest the signer
 * must sign over. It is finalized once: the signed file's hash and a summary of the signature
 * are kept with it. Signing sessions reference their preparation.
 */
export const signaturePreparations = `
CREATE TABLE signature_preparations (
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id),
  source_sha256 TEXT NOT NULL,
  prepared_sha256 TEXT NOT NULL,
  field_name TEXT NOT NULL,
  byte_range TEXT NOT NULL,
  contents_offset INTEGER NOT NULL,
  contents_hex_length INTEGER NOT NULL,
  document_digest TEXT NOT NULL,
  signing_time TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'finalized', 'abandoned')),
  finalized_at TEXT,
  signed_sha256 TEXT,
  signature_summary TEXT,
  CHECK ((state = 'finalized') = (signed_sha256 IS NOT NULL AND signature_summary IS NOT NULL))
);
CREATE INDEX signature_preparations_source ON signature_preparations(tenant_id, source_sha256);
`;

/** The same schema on PostgreSQL, translated by the common conventions. */
export const signaturePreparationsPostgres = postgresOf(signaturePreparations);
