import { derSequence, derUnsignedInteger } from './der';

/**
 * A raw ECDSA signature r||s (what PKCS#11 CKM_ECDSA and WebCrypto return) as the DER
 * `ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }` that CMS carries. The timestamp of a
 * signature covers these DER bytes, so the agent converts before asking the TSA.
 */
export function ecdsaRawSignatureToDer(signature: Uint8Array): Uint8Array {
  if (signature.length === 0 || signature.length % 2 !== 0) {
    throw new RangeError(`raw r||s has an even, non-zero length; got ${signature.length} bytes`);
  }
  const half = signature.length / 2;
  return derSequence(
    derUnsignedInteger(signature.subarray(0, half)),
    derUnsignedInteger(signature.subarray(half)),
  );
}
