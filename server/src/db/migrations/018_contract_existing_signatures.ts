/**
 * The signatures a contract's PDF already carried when it was uploaded, as verified then: a JSON
 * array (`contracts/existingSignatures.ts` reads it back with zod), `[]` for a PDF without any
 * and for contracts uploaded before this migration.
 */
export const contractExistingSignatures = `
ALTER TABLE contracts ADD COLUMN existing_signatures TEXT NOT NULL DEFAULT '[]'
  CHECK (json_valid(existing_signatures));
`;
