import crypto from 'node:crypto';
import {
  cmsOids,
  type DecodedTimestampToken,
  decodeTimestampToken,
  derChildren,
  derTag,
  derUnsignedMagnitude,
  derValue,
  type HashName,
  hashOf,
  readDerElement,
  readDerObjectIdentifier,
  signatureHash,
  TimestampTokenError,
  timestampSignerCertificate,
} from '@esign/shared/cms';
import { id_kp_timeStamping } from '@peculiar/asn1-x509';
import {
  type CertificateFacts,
  CertificateInvalid,
  readCertificate,
  subjectName,
} from '../certificates/certificate';
import { buildChain, type ChainFailureReason, type ChainResult } from '../certificates/chain';
import { type TimestampInvalidReason, timestampInvalid } from './errors';

export interface VerifyTimestampOptions {
  /** SHA-256 of what was timestamped (32 bytes): the token's messageImprint must equal it. */
  imprint: Buffer;
  /** DER certificates; the TSA certificate must chain to one of them. */
  trustAnchors: readonly Buffer[];
  /** genTime may not be before this (less clockSkewMs). */
  notBefore?: Date;
  /** genTime may not be after this (plus clockSkewMs). */
  notAfter?: Date;
  clockSkewMs: number;
}

export interface VerifiedTimestamp {
  genTime: Date;
  /** DER of the certificate that signed the token. */
  tsaCertificate: Buffer;
  /** The TSA certificate up to its trust anchor (TSA first). */
  tsaChain: Buffer[];
  /** TSTInfo serialNumber, lowercase hex without leading zeros. */
  serialNumber: string;
  /** TSTInfo nonce as an unsigned big-endian number, when present. */
  nonce: Buffer | undefined;
  policy: string;
}

function refuse(reason: TimestampInvalidReason, message: string): never {
  throw timestampInvalid(reason, message);
}

function decode(token: Buffer): DecodedTimestampToken {
  try {
    return decodeTimestampToken(token);
  } catch (error) {
    if (error instanceof TimestampTokenError) refuse(error.problem, error.message);
    throw error;
  }
}

/** The certificate the SignerInfo names (issuer and serial, or subject key identifier). */
function signerCertificate(decoded: DecodedTimestampToken): {
  tsa: CertificateFacts;
  all: Buffer[];
} {
  const all = decoded.certificates.map((der) => Buffer.from(der));
  const named = timestampSignerCertificate(decoded);
  if (named === undefined) {
    refuse('TSA_CERTIFICATE_MISSING', 'the token does not carry the TSA certificate');
  }
  return { tsa: readCertificate(Buffer.from(named), 'token certificate'), all };
}

/** The one value of a signed attribute; undefined when absent, refused when repeated. */
function attributeValue(decoded: DecodedTimestampToken, type: string): Buffer | undefined {
  const found = decoded.signer.attributes.filter((attribute) => attribute.type === type);
  if (found.length === 0) return undefined;
  if (found.length > 1 || found[0]!.values.length !== 1) {
    refuse('SIGNED_ATTRIBUTES_INVALID', `attribute ${type} must have exactly one value`);
  }
  return Buffer.from(found[0]!.values[0]!);
}

/** ESS signing-certificate(-v2): the first ESSCertID's hash must be the TSA certificate's. */
function checkSigningCertificate(decoded: DecodedTimestampToken, tsa: CertificateFacts): void {
  const v2 = attributeValue(decoded, cmsOids.signingCertificateV2);
  const v1 = attributeValue(decoded, cmsOids.signingCertificate);
  const value = v2 ?? v1;
  if (value === undefined) {
    refuse('SIGNED_ATTRIBUTES_INVALID', 'no ESS signing-certificate attribute (RFC 3161 2.4.1)');
  }
  let hash: HashName | undefined = v2 ? 'sha256' : 'sha1';
  let certHash: Uint8Array;
  try {
    const certs = derChildren(value, derChildren(value, readDerElement(value))[0]!)[0]!;
    const fields = derChildren(value, certs);
    let index = 0;
    if (v2 && fields[0]?.tag === derTag.sequence) {
      const [algorithm] = derChildren(value, fields[0]);
      if (algorithm === undefined) throw new Error('no hash algorithm');
      hash = hashOf(readDerObjectIdentifier(value, algorithm));
      index = 1;
    }
    const hashField = fields[index];
    if (hashField?.tag !== derTag.octetString) throw new Error('no certHash');
    certHash = derValue(value, hashField);
  } catch (error) {
    refuse(
      'SIGNED_ATTRIBUTES_INVALID',
      `unreadable signing-certificate attribute (${(error as Error).message})`,
    );
  }
  if (hash === undefined) refuse('UNSUPPORTED_ALGORITHM', 'unknown ESSCertIDv2 hash algorithm');
  if (!crypto.createHash(hash).update(tsa.der).digest().equals(certHash)) {
    refuse(
      'SIGNING_CERTIFICATE_MISMATCH',
      'the signing-certificate attribute names another certificate',
    );
  }
}

/** buildChain's failures as the TSA reasons: no trusted path, or an issuer not allowed to issue it. */
const chainReasons: Record<ChainFailureReason, TimestampInvalidReason> = {
  untrusted_root: 'TSA_UNTRUSTED',
  missing_intermediate: 'TSA_UNTRUSTED',
  signature_mismatch: 'TSA_UNTRUSTED',
  chain_not_ending_at_signer: 'TSA_UNTRUSTED',
  issuer_not_ca: 'TSA_ISSUER_NOT_CA',
  path_too_long: 'TSA_ISSUER_NOT_CA',
};

/**
 * The TSA certificate's path to a trust anchor (TSA first, anchor last) by the signature
 * engine's one path builder, and every certificate on it valid at `at` (genTime).
 */
function tsaChainAt(
  tsa: Buffer,
  carried: Buffer[],
  anchors: readonly Buffer[],
  at: Date,
): Buffer[] {
  // The TSA certificate first: the token's SET OF certificates has no order to rely on.
  const provided = [tsa, ...carried.filter((der) => !der.equals(tsa))];
  let result: ChainResult;
  try {
    result = buildChain(tsa, provided, [...anchors]);
  } catch (error) {
    // A certificate of the token or an anchor that does not parse (readCertificate's 422).
    if (error instanceof CertificateInvalid) {
      refuse('MALFORMED', error.message);
    }
    throw error;
  }
  if (!result.ok) refuse(chainReasons[result.reason], result.message);
  // buildChain has read each of them already: no parse failure here.
  const expired = result.chain
    .map((der) => readCertificate(der))
    .find((certificate) => at < certificate.notBefore || at > certificate.notAfter);
  if (expired !== undefined) {
    refuse(
      'TSA_CERTIFICATE_NOT_VALID',
      `certificate "${subjectName(expired)}" is not valid at ${at.toISOString()} (valid ${expired.notBefore.toISOString()} to ${expired.notAfter.toISOString()})`,
    );
  }
  return result.chain;
}

/**
 * Verifies an RFC 3161 TimeStampToken as evidence for `imprint`: structure, imprint, the TSA's
 * signature over the signed attributes, the ESS binding to the TSA certificate, its critical
 * timeStamping EKU, its chain to a trust anchor at genTime, and genTime inside the window.
 * Throws EngineError 422 TIMESTAMP_INVALID with a distinct `details.code` for each failure.
 */
export function verifyTimestampToken(
  token: Buffer,
  options: VerifyTimestampOptions,
): VerifiedTimestamp {
  const decoded = decode(token);
  const { tstInfo, signer: signerInfo } = decoded;

  if (tstInfo.imprintAlgorithm !== cmsOids.sha256) {
    refuse('IMPRINT_ALGORITHM', `the imprint uses ${tstInfo.imprintAlgorithm}, not SHA-256`);
  }
  if (!Buffer.from(tstInfo.hashedMessage).equals(options.imprint)) {
    refuse('IMPRINT_MISMATCH', 'the token timestamps other data');
  }

  const digest = hashOf(signerInfo.digestAlgorithm);
  const signedWith =
    digest === undefined || digest === 'sha1'
      ? undefined
      : signatureHash(signerInfo.signatureAlgorithm, digest);
  if (digest === undefined || signedWith === undefined || digest === 'sha1') {
    refuse(
      'UNSUPPORTED_ALGORITHM',
      `digest ${signerInfo.digestAlgorithm} with signature ${signerInfo.signatureAlgorithm}`,
    );
  }
  const contentType = attributeValue(decoded, cmsOids.contentType);
  const expectedContentType = Buffer.from([
    0x06, 0x0b, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x10, 0x01, 0x04,
  ]);
  if (contentType === undefined || !contentType.equals(expectedContentType)) {
    refuse('SIGNED_ATTRIBUTES_INVALID', 'the content-type attribute is not id-ct-TSTInfo');
  }
  const messageDigest = attributeValue(decoded, cmsOids.messageDigest);
  const expectedDigest = crypto.createHash(digest).update(tstInfo.bytes).digest();
  if (
    messageDigest === undefined ||
    messageDigest[0] !== derTag.octetString ||
    !expectedDigest.equals(derValue(messageDigest, readDerElement(messageDigest)))
  ) {
    refuse('MESSAGE_DIGEST_MISMATCH', 'the message-digest attribute does not match the TSTInfo');
  }

  let signer: { tsa: CertificateFacts; all: Buffer[] };
  try {
    signer = signerCertificate(decoded);
  } catch (error) {
    if (error instanceof CertificateInvalid) {
      refuse('MALFORMED', error.message);
    }
    throw error;
  }
  const { tsa, all } = signer;
  checkSigningCertificate(decoded, tsa);
  const signedAttributes = signerInfo.signedAttributes;
  if (signedAttributes === undefined) refuse('SIGNED_ATTRIBUTES_INVALID', 'no signed attributes');
  let valid = false;
  try {
    valid = crypto.verify(signedWith, signedAttributes, tsa.x509.publicKey, signerInfo.signature);
  } catch {
    valid = false;
  }
  if (!valid) refuse('SIGNATURE_INVALID', 'the TSA signature does not verify');

  const eku = tsa.extendedKeyUsage;
  if (
    eku === null ||
    !tsa.extendedKeyUsageCritical ||
    eku.length !== 1 ||
    eku[0] !== id_kp_timeStamping
  ) {
    refuse(
      'TSA_EKU_INVALID',
      'the TSA certificate must have extendedKeyUsage timeStamping alone, marked critical (RFC 3161 2.3)',
    );
  }

  const genTime = tstInfo.genTime;
  const tsaChain = tsaChainAt(tsa.der, all, options.trustAnchors, genTime);

  const skew = options.clockSkewMs;
  if (
    (options.notBefore && genTime.getTime() < options.notBefore.getTime() - skew) ||
    (options.notAfter && genTime.getTime() > options.notAfter.getTime() + skew)
  ) {
    refuse(
      'GEN_TIME_OUTSIDE_WINDOW',
      `genTime ${genTime.toISOString()} is outside ${options.notBefore?.toISOString() ?? '-∞'} to ${options.notAfter?.toISOString() ?? '+∞'} (skew ${skew} ms)`,
    );
  }

  return {
    genTime,
    tsaCertificate: tsa.der,
    tsaChain,
    serialNumber: Buffer.from(derUnsignedMagnitude(tstInfo.serialNumber)).toString('hex'),
    nonce: tstInfo.nonce ? Buffer.from(derUnsignedMagnitude(tstInfo.nonce)) : undefined,
    policy: tstInfo.policy,
  };
}
