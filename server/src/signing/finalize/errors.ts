import { EngineError } from '../../pdf/engineError';

/** A digest a client may have put in the message-digest attribute instead of the right one. */
export interface MistakenDigest {
  digest: Buffer;
  /** What it is the digest of. */
  of: 'OTHER_PREPARATION' | 'WHOLE_FILE' | 'UNPREPARED_FILE';
}

const mistakenDigestMessages: Record<MistakenDigest['of'], string> = {
  OTHER_PREPARATION:
    'The signature is over the digest of another preparation of this document; sign the current contractHash',
  WHOLE_FILE:
    'The message-digest is SHA-256 of the whole prepared file; it is SHA-256 over the /ByteRange (the file without its /Contents placeholder): sign the contractHash as given',
  UNPREPARED_FILE:
    'The message-digest is SHA-256 of the document before preparation; sign the contractHash as given (the digest of the prepared revision)',
};

/**
 * The refusals of the finalize pipeline that the layers below do not already give, one code
 * per cause so that a signing client can tell what to do again (sign again, send another
 * chain, ask another timestamp, start a new preparation).
 */
export const finalizeErrors = {
  preparationNotFound: (id: number) =>
    new EngineError('PREPARATION_NOT_FOUND', `No signature preparation with id ${id}`),
  preparationNotOpen: (state: string) =>
    new EngineError('PREPARATION_NOT_OPEN', `The signature preparation is ${state}`, {
      detailCode: state.toUpperCase(),
    }),
  preparationExpired: (expiresAt: string) =>
    new EngineError(
      'PREPARATION_EXPIRED',
      `The signature preparation expired at ${expiresAt}; prepare the document again`,
    ),
  sourceNotFound: (sha256: string) =>
    new EngineError('SOURCE_FILE_NOT_FOUND', `No stored file with SHA-256 ${sha256}`, {
      field: 'sourceSha256',
    }),
  invalidBase64: (field: string) =>
    new EngineError(
      'INVALID_BASE64',
      `${field} is not standard base64 (RFC 4648 section 4, padded, no line breaks)`,
      { field },
    ),
  signerNotFirst: (index: number) =>
    new EngineError(
      'SIGNER_CERTIFICATE_NOT_FIRST',
      `The signature was made with the key of certificateChain[${index}]; the signer's certificate must come first`,
      { field: 'certificateChain' },
    ),
  documentDigestMismatch: (of: MistakenDigest['of']) =>
    new EngineError('DOCUMENT_DIGEST_MISMATCH', mistakenDigestMessages[of], {
      field: 'signedHash',
      detailCode: of,
    }),
  signatureByOtherKey: () =>
    new EngineError(
      'SIGNATURE_INVALID',
      "The RSA signature does not open with the signer certificate's public key: another key made it (the token's key is not the certificate's) or its bytes are damaged",
      { field: 'signedHash' },
    ),
  signingCertificateMismatch: (index: number) =>
    new EngineError(
      'SIGNING_CERTIFICATE_MISMATCH',
      `The signed attributes' signing-certificate-v2 names certificateChain[${index}]; it must name the signer's certificate, certificateChain[0]`,
      { field: 'signedHash' },
    ),
  signedAttributesAbsent: () =>
    new EngineError(
      'SIGNED_ATTRIBUTES_ABSENT',
      'The signature is over the document digest itself; sign the signed attributes built from it (docs/signing-with-a-token.md)',
      { field: 'signedHash' },
    ),
  signedAttributesWrongTag: () =>
    new EngineError(
      'SIGNED_ATTRIBUTES_WRONG_TAG',
      'The signed attributes were signed with the tag [0] (0xA0) they carry inside SignerInfo; sign them as a SET OF (first byte 0x31)',
      { field: 'signedHash' },
    ),
  signedAttributesUnsorted: () =>
    new EngineError(
      'SIGNED_ATTRIBUTES_UNSORTED',
      'The signed attributes are not in DER SET OF order; sort them (content-type, message-digest, signing-certificate-v2)',
      { field: 'signedHash' },
    ),
  signedAttributesMissing: (missing: string[]) =>
    new EngineError(
      'SIGNED_ATTRIBUTES_MISSING',
      `The signed attributes lack ${missing.join(' and ')}; exactly content-type, message-digest and signing-certificate-v2 are signed`,
      { field: 'signedHash' },
    ),
  signedAttributesExtra: (attribute: string) =>
    new EngineError(
      'SIGNED_ATTRIBUTES_EXTRA',
      `The signed attributes hold one attribute more, ${attribute}; exactly content-type, message-digest and signing-certificate-v2 are signed (PAdES keeps the time in the PDF)`,
      { field: 'signedHash' },
    ),
  signatureHashMismatch: (hash: string) =>
    new EngineError(
      'SIGNATURE_HASH_MISMATCH',
      `The token hashed the signed attributes with ${hash.toUpperCase()}; SHA-256 is required (CKM_SHA256_RSA_PKCS, or CKM_RSA_PKCS over a SHA-256 DigestInfo)`,
      { field: 'signedHash' },
    ),
  signedAttributesMismatch: () =>
    new EngineError(
      'SIGNED_ATTRIBUTES_MISMATCH',
      "The certificate's key signed the SHA-256 of other bytes than the signed attributes of the current contractHash, and not in a form the service recognises (another preparation's digest, another certificate, an attribute more or fewer, another order or tag): check the message-digest value and every attribute against docs/signing-with-a-token.md",
      { field: 'signedHash' },
    ),
  chainNotLinked: (index: number) =>
    new EngineError(
      'CERTIFICATE_CHAIN_INVALID',
      `certificateChain[${index + 1}] is not the issuer of certificateChain[${index}]: the chain goes from the signer to its issuers in turn`,
      { field: 'certificateChain', detailCode: 'NOT_LINKED' },
    ),
  certificateNotPrepared: () =>
    new EngineError(
      'CERTIFICATE_NOT_PREPARED',
      "The revision was prepared for another certificate (its visible box shows that certificate's name); sign with that certificate, or prepare the revision again for this one",
      { field: 'certificateChain' },
    ),
  certificateNameNotPrepared: () =>
    new EngineError(
      'CERTIFICATE_NAME_NOT_PREPARED',
      'The visible box of the prepared revision shows another name than the certificate\'s common name; prepare the revision for this certificate (docs/signing-with-a-token.md, "The moment of signing") and sign its contractHash',
      { field: 'certificateChain' },
    ),
  preparationStale: (signingTime: Date, genTime: Date, limitMs: number) =>
    new EngineError(
      'PREPARATION_STALE',
      `The prepared revision states ${signingTime.toISOString()} as its signing time, more than ${limitMs / 60_000} minutes before the timestamp (${genTime.toISOString()}); prepare the revision again just before the token signs (docs/signing-with-a-token.md, "The moment of signing") and sign its contractHash`,
    ),
  certificateRevoked: (message: string) =>
    new EngineError('CERTIFICATE_REVOKED', message, { field: 'certificateChain' }),
};
