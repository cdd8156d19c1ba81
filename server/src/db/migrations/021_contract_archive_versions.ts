import { fileVersionColumns } from './013_contracts';
import { postgresOf, restartIdentityPostgres } from './sqlParts';

/** The rebuilt table after its name: `kind` follows `version`. */
const rebuiltTable = ` (
  id INTEGER PRIMARY KEY,
  contract_id INTEGER NOT NULL REFERENCES contracts(id),
  version INTEGER NOT NULL CHECK (version > 0),
  kind TEXT NOT NULL CHECK (kind IN ('original', 'signature', 'archive')),
${fileVersionColumns}
  CHECK ((version = 1) = (kind = 'original')),
  CHECK ((kind = 'signature') = (signer_id IS NOT NULL))
);`;

/** The columns and rows copied from `source`, each with its kind (no archive version exists yet). */
function copiedRows(source: string): string {
  return `  (id, contract_id, version, kind, sha256, size, mime_type, signer_id, created_at)
SELECT id, contract_id, version, CASE WHEN version = 1 THEN 'original' ELSE 'signature' END,
  sha256, size, mime_type, signer_id, created_at
FROM ${source}`;
}

/**
 * Contract file versions get a `kind`: the original (version 1), one per signature (made by a
 * signer), and the archive revision the service adds when the last signer has signed (PAdES
 * B-LTA: the DSS for every signature and a document timestamp), which no signer made. SQLite
 * cannot change a CHECK in place, so the table is rebuilt with the same rows and ids; nothing
 * references it.
 */
export const contractArchiveVersions = `
CREATE TABLE contract_file_versions_021${rebuiltTable}
INSERT INTO contract_file_versions_021
${copiedRows('contract_file_versions')};
DROP TABLE contract_file_versions;
ALTER TABLE contract_file_versions_021 RENAME TO contract_file_versions;
`;

/**
 * The same on PostgreSQL, rebuilt too so that `kind` sits after `version` as on SQLite (ALTER
 * TABLE would add it last): the rows go through a temporary copy so the new table and its
 * constraints carry their own names, and the identity continues after the copied ids.
 */
export const contractArchiveVersionsPostgres = `
CREATE TEMPORARY TABLE contract_file_versions_021 AS SELECT * FROM contract_file_versions;
DROP TABLE contract_file_versions;
CREATE TABLE contract_file_versions${postgresOf(rebuiltTable)}
INSERT INTO contract_file_versions
${copiedRows('contract_file_versions_021')};
DROP TABLE contract_file_versions_021;
${restartIdentityPostgres('contract_file_versions')}
`;
