import { postgresOf } from './sqlParts';

/**
 * The signer's identity bound to the certificate: a contract signer may be named by an identity
 * number (CMND/CCCD/passport) or a tax code, compared with what the signing certificate carries;
 * a preparation records the name its visible box shows and, when it was made for a known
 * certificate (cloud_hsm, or a usb_token client that sent its certificate to `prepare`), that
 * certificate's SHA-256, so that only that certificate can finalize it.
 */
export const signerIdentity = `
ALTER TABLE contract_signers ADD COLUMN identity_number TEXT;
ALTER TABLE contract_signers ADD COLUMN tax_code TEXT;
ALTER TABLE signature_preparations ADD COLUMN shown_name TEXT;
ALTER TABLE signature_preparations ADD COLUMN certificate_sha256 TEXT;
`;

/** PostgreSQL reads the same text (no type or dialect-specific syntax in it). */
export const signerIdentityPostgres = postgresOf(signerIdentity);
