import { createHash } from 'node:crypto';
import {
  certificateIssuerAndSerial,
  cmsOids,
  contextTag,
  type DerElement,
  DerError,
  derBytes,
  derChildren,
  derTag,
  derValue,
  hashOf,
  readDerObjectIdentifier,
  readDerWhole,
} from '@esign/shared/cms';
import { cmsErrors } from './errors';

/**
 * The first ESSCertID(v2) of signing-certificate(-v2): the one naming the signer (RFC 5035
 * section 5.4; RFC 2634 section 5.4 for v1, whose hash is always SHA-1).
 */
export interface SigningCertificateReference {
  hashAlgorithmOid: string;
  certHash: Buffer;
  /** The IssuerSerial's directoryName (exact DER Name) and serial INTEGER, when present. */
  issuerSerial: { issuer: Buffer; serialNumber: Buffer } | undefined;
}

/** What verification needs from a SignerInfo's signed attributes, whoever built them. */
export interface SignedAttributeValues {
  /** Every attribute type, in order. */
  types: string[];
  contentType: string | undefined;
  messageDigest: Buffer | undefined;
  signingCertificateV2: SigningCertificateReference | undefined;
  /** signing-certificate (v1), which older tools write instead of v2. */
  signingCertificateV1: SigningCertificateReference | undefined;
}

function fail(what: string): never {
  throw new DerError(what);
}

function essCertId(
  bytes: Uint8Array,
  value: DerElement,
  defaultHashOid: string,
): SigningCertificateReference {
  const [certs] = derChildren(bytes, value);
  const [first] = certs ? derChildren(bytes, certs) : [];
  if (!first) fail('signing-certificate names no certificate');
  const fields = derChildren(bytes, first);
  // v2's hashAlgorithm DEFAULT id-sha256: present only when it is another algorithm (v1 has none).
  const [algorithm] =
    defaultHashOid === cmsOids.sha256 && fields[0]?.tag === derTag.sequence
      ? fields.splice(0, 1)
      : [];
  const [algorithmOid] = algorithm ? derChildren(bytes, algorithm) : [];
  if (algorithm && !algorithmOid) fail('an empty hashAlgorithm');
  const hashAlgorithmOid = algorithmOid
    ? readDerObjectIdentifier(bytes, algorithmOid)
    : defaultHashOid;
  const [certHash, issuerSerial] = fields;
  if (certHash?.tag !== derTag.octetString) fail('an ESSCertIDv2 without certHash');
  let reference: SigningCertificateReference['issuerSerial'];
  if (issuerSerial) {
    const [generalNames, serialNumber] = derChildren(bytes, issuerSerial);
    const [directoryName] = generalNames ? derChildren(bytes, generalNames) : [];
    const [name] = directoryName?.tag === contextTag(4) ? derChildren(bytes, directoryName) : [];
    if (!name || serialNumber?.tag !== derTag.integer)
      fail('an IssuerSerial without directoryName and serial');
    reference = {
      issuer: Buffer.from(derBytes(bytes, name)),
      serialNumber: Buffer.from(derBytes(bytes, serialNumber)),
    };
  }
  return {
    hashAlgorithmOid,
    certHash: Buffer.from(derValue(bytes, certHash)),
    issuerSerial: reference,
  };
}

/**
 * Reads the signed attributes (the SET as signed, tag 0x31) of any CMS signature: content-type,
 * message-digest and signing-certificate-v2 (or v1), each required to be single-valued and present at
 * most once (RFC 5652 section 11, RFC 5035). Throws 400 SIGNED_ATTRIBUTES_MALFORMED.
 */
export function readSignedAttributes(signedAttributes: Uint8Array): SignedAttributeValues {
  try {
    const set = readDerWhole(signedAttributes);
    if (set.tag !== derTag.set) fail('not a SET (tag 0x31)');
    const values: SignedAttributeValues = {
      types: [],
      contentType: undefined,
      messageDigest: undefined,
      signingCertificateV2: undefined,
      signingCertificateV1: undefined,
    };
    for (const attribute of derChildren(signedAttributes, set)) {
      const [typeElement, valueSet, extra] = derChildren(signedAttributes, attribute);
      if (!typeElement || valueSet?.tag !== derTag.set || extra)
        fail('an attribute is not { type, SET }');
      const type = readDerObjectIdentifier(signedAttributes, typeElement);
      if (values.types.includes(type)) fail(`attribute ${type} appears twice`);
      values.types.push(type);
      const members = derChildren(signedAttributes, valueSet);
      const [value] = members;
      const single = members.length === 1 && value !== undefined;
      if (type === cmsOids.contentType) {
        if (!single) fail('content-type is not single-valued');
        values.contentType = readDerObjectIdentifier(signedAttributes, value);
      } else if (type === cmsOids.messageDigest) {
        if (!single || value.tag !== derTag.octetString)
          fail('message-digest is not one OCTET STRING');
        values.messageDigest = Buffer.from(derValue(signedAttributes, value));
      } else if (type === cmsOids.signingCertificateV2) {
        if (!single) fail('signing-certificate-v2 is not single-valued');
        values.signingCertificateV2 = essCertId(signedAttributes, value, cmsOids.sha256);
      } else if (type === cmsOids.signingCertificate) {
        if (!single) fail('signing-certificate is not single-valued');
        values.signingCertificateV1 = essCertId(signedAttributes, value, cmsOids.sha1);
      }
    }
    return values;
  } catch (error) {
    if (!(error instanceof DerError)) throw error;
    throw cmsErrors.signedAttributesMalformed(
      `The signed attributes cannot be read: ${error.message}`,
    );
  }
}

/**
 * Whether signing-certificate(-v2) names this certificate: its hash matches and, when the
 * reference has an IssuerSerial, the issuer and serial are the certificate's. A hash algorithm
 * the engine does not know gives false.
 */
export function signingCertificateMatches(
  reference: SigningCertificateReference,
  certificate: Uint8Array,
): boolean {
  const hashName = hashOf(reference.hashAlgorithmOid);
  if (!hashName) return false;
  if (!createHash(hashName).update(certificate).digest().equals(reference.certHash)) return false;
  if (!reference.issuerSerial) return true;
  const named = certificateIssuerAndSerial(certificate);
  return (
    reference.issuerSerial.issuer.equals(named.issuer) &&
    reference.issuerSerial.serialNumber.equals(named.serialNumber)
  );
}
