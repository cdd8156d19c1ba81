import { postgresOf } from './sqlParts';

/**
 * What finalize obtained to validate a signature later (chains, OCSP answers, CRLs), kept with
 * the finalized preparation: the next preparation of the signed file writes it into its DSS
 * without asking the responders again.
 */
export const preparationValidationMaterial = `
ALTER TABLE signature_preparations ADD COLUMN validation_material TEXT;
`;

/** PostgreSQL reads the same text (no type or dialect-specific syntax in it). */
export const preparationValidationMaterialPostgres = postgresOf(preparationValidationMaterial);
