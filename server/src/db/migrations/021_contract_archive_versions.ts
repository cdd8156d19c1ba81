import { fileVersionColumns } from './013_contracts';

/**
 * Contract file versions get a `kind`: the original (version 1), one per signature (made by a
 * signer), and the archive revision the service adds when the last signer has signed (PAdES
 * B-LTA: the DSS for every signature and a document timestamp), which no signer made. SQLite
 * cannot change a CHECK in place, so the table is rebuilt with the same rows and ids; nothing
 * references it.
 */
export const contractArchiveVersions = `
CREATE TABLE contract_file_versions_021 (
  id INTEGER PRIMARY KEY,
  contract_id INTEGER NOT NULL REFERENCES contracts(id),
  version INTEGER NOT NULL CHECK (version > 0),
  kind TEXT NOT NULL CHECK (kind IN ('original', 'signature', 'archive')),
${fileVersionColumns}
  CHECK ((version = 1) = (kind = 'original')),
  CHECK ((kind = 'signature') = (signer_id IS NOT NULL))
);
INSERT INTO contract_file_versions_021
  (id, contract_id, version, kind, sha256, size, mime_type, signer_id, created_at)
SELECT id, contract_id, version, CASE WHEN version = 1 THEN 'original' ELSE 'signature' END,
  sha256, size, mime_type, signer_id, created_at
FROM contract_file_versions;
DROP TABLE contract_file_versions;
ALTER TABLE contract_file_versions_021 RENAME TO contract_file_versions;
`;
