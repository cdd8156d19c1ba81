import { contractStateCodes } from '../contracts/lifecycle';

/**
 * The error codes the signing-session endpoints document, each list declared once (the
 * HTTP-wide ones are in http/openapi.ts: guardErrors, jsonBodyErrors).
 */

/** What every step answers before its own work: the session, its contract, its state. */
export const sessionStateErrors = [
  'SESSION_NOT_FOUND',
  'CONTRACT_CANCELLED',
  'CONTRACT_EXPIRED',
  'CONTRACT_COMPLETED',
  'CONTRACT_REJECTED',
  'SESSION_ALREADY_USED',
  'SESSION_SUPERSEDED',
  'SESSION_LOCKED',
  'SIGNING_METHOD_MISMATCH',
  'SESSION_EXPIRED',
] as const;

/**
 * What opening a session for a contract signer refuses, whoever asks (a partner's initiate or
 * the signer's invitation link): the contract's state, the signer's role, status and turn, a
 * cloud key or certificate that is not theirs.
 */
export const contractTurnErrors = [
  ...Object.values(contractStateCodes),
  'SIGNER_IS_VIEWER',
  'SIGNER_ALREADY_SIGNED',
  'NOT_SIGNER_TURN',
  'SIGNER_KEY_NOT_ENROLLED',
  'SIGNER_IDENTITY_MISMATCH',
];

/** What an invitation link answers when it opens nothing, and the limits of its endpoints. */
export const invitationErrors = [
  'INVITATION_NOT_FOUND',
  'INVITATION_EXPIRED',
  'PAYLOAD_TOO_LARGE',
  'RATE_LIMITED',
] as const;

/** What the engine's finalize refuses a token signature with (docs/signing-with-a-token.md). */
export const tokenRefusals = [
  'INVALID_BASE64',
  'SIGNATURE_MALFORMED',
  'CERTIFICATE_MALFORMED',
  'TIMESTAMP_TOKEN_MALFORMED',
  'SIGNED_DATA_MALFORMED',
  'PREPARATION_NOT_OPEN',
  'DOCUMENT_CHANGED',
  'PREPARATION_STALE',
  'PREPARATION_EXPIRED',
  'SIGNATURE_INVALID',
  'SIGNER_CERTIFICATE_NOT_FIRST',
  'DOCUMENT_DIGEST_MISMATCH',
  'SIGNING_CERTIFICATE_MISMATCH',
  'SIGNED_ATTRIBUTES_ABSENT',
  'SIGNED_ATTRIBUTES_WRONG_TAG',
  'SIGNED_ATTRIBUTES_UNSORTED',
  'SIGNED_ATTRIBUTES_MISSING',
  'SIGNED_ATTRIBUTES_EXTRA',
  'SIGNATURE_HASH_MISMATCH',
  'SIGNED_ATTRIBUTES_MISMATCH',
  'SIGNER_IDENTITY_MISMATCH',
  'CERTIFICATE_NOT_PREPARED',
  'CERTIFICATE_NAME_NOT_PREPARED',
  'SIGNATURE_SCHEME_MISMATCH',
  'CERTIFICATE_CHAIN_EMPTY',
  'CERTIFICATE_CHAIN_INVALID',
  'CERTIFICATE_INVALID',
  'CERTIFICATE_EXPIRED',
  'CERTIFICATE_NOT_YET_VALID',
  'CERTIFICATE_KEY_USAGE',
  'CERTIFICATE_KEY_UNSUPPORTED',
  'CERTIFICATE_UNTRUSTED',
  'CERTIFICATE_REVOKED',
  'TIMESTAMP_INVALID',
  'TIMESTAMP_IMPRINT_MISMATCH',
  'PDF_SIGNATURE_TOO_LARGE',
] as const;
