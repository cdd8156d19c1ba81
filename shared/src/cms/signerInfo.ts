import { contextTag, DerError, derBytes, derChildren, derTag, readDerElement } from './der';

/**
 * The signed attributes of the first SignerInfo of a DER SignedData, as they were signed: the
 * exact bytes of the token, re-tagged from `[0] IMPLICIT` to `SET OF` (RFC 5652 section 5.4).
 * Read from the bytes, never re-encoded: a re-encoding could differ from what was signed.
 * Undefined when the SignerInfo has none; DerError when the structure is not there.
 */
export function firstSignerSignedAttributes(signedDataDer: Uint8Array): Uint8Array | undefined {
  const signedData = readDerElement(signedDataDer);
  const signerInfos = derChildren(signedDataDer, signedData).at(-1);
  if (signerInfos?.tag !== derTag.set) throw new DerError('no SignerInfos');
  const signerInfo = derChildren(signedDataDer, signerInfos)[0];
  if (signerInfo === undefined) throw new DerError('no SignerInfo');
  const attributes = derChildren(signedDataDer, signerInfo).find(
    (element) => element.tag === contextTag(0),
  );
  if (attributes === undefined) return undefined;
  // A copy: its tag is rewritten.
  const bytes = Uint8Array.from(derBytes(signedDataDer, attributes));
  bytes[0] = derTag.set;
  return bytes;
}
