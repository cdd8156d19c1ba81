/**
 * The signatures a contract's PDF already carried when it was uploaded, as verified then: a JSON
 * array (`contracts/existingSignatures.ts` reads it back with zod), `[]` for a PDF without any
 * and for contracts uploaded before this migration.
 */
export const contractExistingSignatures = `
ALTER TABLE contracts ADD COLUMN existing_signatures TEXT NOT NULL DEFAULT '[]'
  CHECK (json_valid(existing_signatures));
`;

/**
 * The same on PostgreSQL. PostgreSQL 15 has no json_valid() (nor `IS JSON`): `esign_json_valid`
 * is true when the text parses as JSON (the json type, which keeps the text as it is, as
 * SQLite's check does), false otherwise, so a bad value fails the CHECK as on SQLite.
 */
export const contractExistingSignaturesPostgres = `
CREATE FUNCTION esign_json_valid(value text) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  PERFORM value::json;
  RETURN true;
EXCEPTION WHEN data_exception THEN
  RETURN false;
END $$;
ALTER TABLE contracts ADD COLUMN existing_signatures TEXT NOT NULL DEFAULT '[]'
  CHECK (esign_json_valid(existing_signatures));
`;
