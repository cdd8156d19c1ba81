import {
  cmsOids,
  derElement,
  derNull,
  derObjectIdentifier,
  derSequence,
  derUnsignedInteger,
} from '@esign/shared/cms';

/**
 * The signature algorithms the engine accepts, all over SHA-256 (the digest algorithm of the
 * SignerInfo, which is what verifiers hash the signed attributes with).
 */
export type SignatureAlgorithm = 'rsaPkcs1Sha256' | 'rsaPssSha256' | 'ecdsaSha256';

/** RSASSA-PSS as the engine uses it: SHA-256, MGF1 with SHA-256, 32-byte salt. */
export const PSS_SALT_LENGTH = 32;

const sha256Identifier = derSequence(derObjectIdentifier(cmsOids.sha256));

/** DigestAlgorithmIdentifier sha256, parameters absent (RFC 5754 section 2). */
export function sha256AlgorithmIdentifier(): Uint8Array {
  return sha256Identifier;
}

/**
 * RSASSA-PSS-params (RFC 4055): hashAlgorithm [0] sha256, maskGenAlgorithm [1] MGF1(sha256),
 * saltLength [2] 32; trailerField left at its default.
 */
function pssParameters(): Uint8Array {
  return derSequence(
    derElement(0xa0, sha256Identifier),
    derElement(0xa1, derSequence(derObjectIdentifier(cmsOids.mgf1), sha256Identifier)),
    derElement(0xa2, derUnsignedInteger(Uint8Array.of(PSS_SALT_LENGTH))),
  );
}

/** The SignerInfo's signatureAlgorithm for a scheme (RFC 3370 / RFC 4056 / RFC 5758). */
export function signatureAlgorithmIdentifier(algorithm: SignatureAlgorithm): Uint8Array {
  switch (algorithm) {
    case 'rsaPkcs1Sha256':
      // rsaEncryption with NULL parameters: what RFC 3370 asks for and every validator reads.
      return derSequence(derObjectIdentifier(cmsOids.rsaEncryption), derNull);
    case 'rsaPssSha256':
      return derSequence(derObjectIdentifier(cmsOids.rsassaPss), pssParameters());
    case 'ecdsaSha256':
      return derSequence(derObjectIdentifier(cmsOids.ecdsaWithSha256));
  }
}

/** The scheme a SignerInfo's signatureAlgorithm names, or undefined for anything else. */
export function signatureAlgorithmFromIdentifier(
  oid: string,
  parameters: Uint8Array | undefined,
): SignatureAlgorithm | undefined {
  if (oid === cmsOids.rsaEncryption || oid === cmsOids.sha256WithRsaEncryption) {
    return 'rsaPkcs1Sha256';
  }
  if (oid === cmsOids.ecdsaWithSha256) return 'ecdsaSha256';
  if (oid === cmsOids.rsassaPss && parameters !== undefined) {
    return Buffer.from(parameters).equals(Buffer.from(pssParameters()))
      ? 'rsaPssSha256'
      : undefined;
  }
  return undefined;
}
