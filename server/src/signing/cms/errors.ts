import { SignedAttributesError } from '@esign/shared/cms';
import { EngineError } from '../../pdf/engineError';

/**
 * The refusals of the CMS layer, one code per cause so that a client (and a test) can tell a
 * wrong key from a garbled signature. `field` names the sign-with-token input at fault.
 */
export const cmsErrors = {
  signatureMalformed: (message: string) =>
    new EngineError('SIGNATURE_MALFORMED', message, { field: 'signedHash' }),
  signatureInvalid: (message: string) =>
    new EngineError('SIGNATURE_INVALID', message, { field: 'signedHash' }),
  certificateMalformed: (message: string) =>
    new EngineError('CERTIFICATE_MALFORMED', message, { field: 'certificateChain' }),
  certificateKeyUnsupported: (message: string) =>
    new EngineError('CERTIFICATE_KEY_UNSUPPORTED', message, { field: 'certificateChain' }),
  signatureSchemeMismatch: (message: string) =>
    new EngineError('SIGNATURE_SCHEME_MISMATCH', message, { field: 'signedHash' }),
  signedAttributesMalformed: (message: string) =>
    new EngineError('SIGNED_ATTRIBUTES_MALFORMED', message),
  documentDigestInvalid: (message: string) => new EngineError('DOCUMENT_DIGEST_INVALID', message),
  timestampTokenMalformed: (message: string) =>
    new EngineError('TIMESTAMP_TOKEN_MALFORMED', message, { field: 'timestampToken' }),
  timestampImprintMismatch: (message: string) =>
    new EngineError('TIMESTAMP_IMPRINT_MISMATCH', message, { field: 'timestampToken' }),
  signedDataMalformed: (message: string) => new EngineError('SIGNED_DATA_MALFORMED', message),
};

/** The shared attribute builder's refusal as the service's 4xx (other errors pass through). */
export function fromSignedAttributesError(error: unknown): unknown {
  if (!(error instanceof SignedAttributesError)) return error;
  return error.code === 'DOCUMENT_DIGEST_INVALID'
    ? cmsErrors.documentDigestInvalid(error.message)
    : cmsErrors.certificateMalformed(error.message);
}
