import { ApiError } from '../../errors/apiError';

/**
 * The refusals of the finalize pipeline that the layers below do not already give, one code
 * per cause so that a signing client can tell what to do again (sign again, send another
 * chain, ask another timestamp, start a new preparation).
 */
export const finalizeErrors = {
  preparationNotFound: (id: number) =>
    new ApiError(404, 'PREPARATION_NOT_FOUND', `No signature preparation with id ${id}`),
  preparationNotOpen: (state: string) =>
    new ApiError(409, 'PREPARATION_NOT_OPEN', `The signature preparation is ${state}`, {
      detailCode: state.toUpperCase(),
    }),
  preparationExpired: (expiresAt: string) =>
    new ApiError(
      410,
      'PREPARATION_EXPIRED',
      `The signature preparation expired at ${expiresAt}; prepare the document again`,
    ),
  sourceNotFound: (sha256: string) =>
    new ApiError(404, 'SOURCE_FILE_NOT_FOUND', `No stored file with SHA-256 ${sha256}`, {
      field: 'sourceSha256',
    }),
  invalidBase64: (field: string) =>
    new ApiError(
      400,
      'INVALID_BASE64',
      `${field} is not standard base64 (RFC 4648 section 4, padded, no line breaks)`,
      { field },
    ),
  signerNotFirst: (index: number) =>
    new ApiError(
      422,
      'SIGNER_CERTIFICATE_NOT_FIRST',
      `The signature was made with the key of certificateChain[${index}]; the signer's certificate must come first`,
      { field: 'certificateChain' },
    ),
  documentDigestMismatch: () =>
    new ApiError(
      422,
      'DOCUMENT_DIGEST_MISMATCH',
      'The signature is over the digest of another preparation of this document; sign the current contractHash',
      { field: 'signedHash' },
    ),
  signedAttributesMismatch: (why: string) =>
    new ApiError(
      422,
      'SIGNED_ATTRIBUTES_MISMATCH',
      `The certificate's key signed other attributes than the ones the service builds (${why}); see docs/signing-with-a-token.md`,
      { field: 'signedHash' },
    ),
  chainNotLinked: (index: number) =>
    new ApiError(
      422,
      'CERTIFICATE_CHAIN_INVALID',
      `certificateChain[${index + 1}] is not the issuer of certificateChain[${index}]: the chain goes from the signer to its issuers in turn`,
      { field: 'certificateChain', detailCode: 'NOT_LINKED' },
    ),
  certificateRevoked: (message: string) =>
    new ApiError(422, 'CERTIFICATE_REVOKED', message, { field: 'certificateChain' }),
};
