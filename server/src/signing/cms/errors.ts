import { SignedAttributesError } from '@esign/shared/cms';
import { ApiError } from '../../errors/apiError';

/**
 * The refusals of the CMS layer, one code per cause so that a client (and a test) can tell a
 * wrong key from a garbled signature. `field` names the sign-with-token input at fault.
 */
export const cmsErrors = {
  signatureMalformed: (message: string) =>
    new ApiError(400, 'SIGNATURE_MALFORMED', message, { field: 'signedHash' }),
  signatureInvalid: (message: string) =>
    new ApiError(422, 'SIGNATURE_INVALID', message, { field: 'signedHash' }),
  certificateMalformed: (message: string) =>
    new ApiError(400, 'CERTIFICATE_MALFORMED', message, { field: 'certificateChain' }),
  certificateKeyUnsupported: (message: string) =>
    new ApiError(422, 'CERTIFICATE_KEY_UNSUPPORTED', message, { field: 'certificateChain' }),
  signatureSchemeMismatch: (message: string) =>
    new ApiError(422, 'SIGNATURE_SCHEME_MISMATCH', message, { field: 'signedHash' }),
  signedAttributesMalformed: (message: string) =>
    new ApiError(400, 'SIGNED_ATTRIBUTES_MALFORMED', message),
  documentDigestInvalid: (message: string) => new ApiError(400, 'DOCUMENT_DIGEST_INVALID', message),
  timestampTokenMalformed: (message: string) =>
    new ApiError(400, 'TIMESTAMP_TOKEN_MALFORMED', message, { field: 'timestampToken' }),
  timestampImprintMismatch: (message: string) =>
    new ApiError(422, 'TIMESTAMP_IMPRINT_MISMATCH', message, { field: 'timestampToken' }),
  signedDataMalformed: (message: string) => new ApiError(400, 'SIGNED_DATA_MALFORMED', message),
};

/** The shared attribute builder's refusal as the service's 4xx (other errors pass through). */
export function fromSignedAttributesError(error: unknown): unknown {
  if (!(error instanceof SignedAttributesError)) return error;
  return error.code === 'DOCUMENT_DIGEST_INVALID'
    ? cmsErrors.documentDigestInvalid(error.message)
    : cmsErrors.certificateMalformed(error.message);
}
