import crypto from 'node:crypto';
import {
  cmsOids,
  contextTag,
  DerError,
  derBytes,
  derChildren,
  derTag,
  derValue,
  readDerElement,
} from '@esign/shared/cms';
import { AsnConvert } from '@peculiar/asn1-schema';
import {
  AuthorityInfoAccessSyntax,
  AuthorityKeyIdentifier,
  BasicConstraints,
  Certificate,
  CRLDistributionPoints,
  ExtendedKeyUsage,
  type Extension,
  id_ce_authorityKeyIdentifier,
  id_ce_basicConstraints,
  id_ce_cRLDistributionPoints,
  id_ce_extKeyUsage,
  id_ce_keyUsage,
  id_ce_subjectKeyIdentifier,
  id_pe_authorityInfoAccess,
  KeyUsage,
  KeyUsageFlags,
  SubjectKeyIdentifier,
} from '@peculiar/asn1-x509';
import { EngineError } from '../../pdf/engineError';

/** The exact bytes of a certificate's parts, as the CA signed them (not an ASN.1 re-encoding). */
export interface CertificateParts {
  issuer: Buffer;
  subject: Buffer;
  subjectPublicKeyInfo: Buffer;
  /** The subjectPublicKey BIT STRING's bits (without the unused-bits byte): what OCSP hashes. */
  subjectPublicKey: Buffer;
}

/** A Buffer over the same memory (no copy). */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Raw issuer, subject and key of a DER certificate (RFC 5280 §4.1); DerError when it is none. */
export function certificateParts(der: Buffer): CertificateParts {
  const tbs = derChildren(der, readDerElement(der))[0];
  if (tbs === undefined) throw new DerError('not a certificate');
  const fields = derChildren(der, tbs);
  // version [0] EXPLICIT is optional; it shifts the other fields by one.
  const shift = fields[0]?.tag === contextTag(0) ? 1 : 0;
  const issuer = fields[shift + 2];
  const subject = fields[shift + 4];
  const spki = fields[shift + 5];
  if (issuer === undefined || subject === undefined || spki === undefined) {
    throw new DerError('not a certificate');
  }
  const bits = derChildren(der, spki)[1];
  if (bits === undefined || bits.tag !== derTag.bitString) {
    throw new DerError('no subject public key');
  }
  return {
    issuer: asBuffer(derBytes(der, issuer)),
    subject: asBuffer(derBytes(der, subject)),
    subjectPublicKeyInfo: asBuffer(derBytes(der, spki)),
    subjectPublicKey: asBuffer(derValue(der, bits).subarray(1)),
  };
}

/** The facts about one certificate that chain building and revocation checks read. */
export interface CertificateFacts {
  der: Buffer;
  parts: CertificateParts;
  /** Node's view: signature checks (`verify`) and the public key. */
  x509: crypto.X509Certificate;
  asn: Certificate;
  /** SHA-256 of the DER, lower-case hex: how trust anchors are told apart. */
  fingerprint: string;
  /** Serial number as lower-case hex without leading zero bytes. */
  serialHex: string;
  notBefore: Date;
  notAfter: Date;
  /** null when the extension is absent. */
  basicConstraintsCa: boolean | null;
  /** basicConstraints pathLenConstraint: how many intermediates may follow; null = no limit. */
  pathLength: number | null;
  /** The keyUsage bits, or null when the extension is absent (then any usage is allowed). */
  keyUsage: number | null;
  /** The extendedKeyUsage purposes, or null when the extension is absent. */
  extendedKeyUsage: string[] | null;
  /** Whether the extendedKeyUsage extension is marked critical (false when absent). */
  extendedKeyUsageCritical: boolean;
  subjectKeyId: Buffer | null;
  authorityKeyId: Buffer | null;
  ocspUrls: string[];
  crlUrls: string[];
}

export const keyUsageBits = KeyUsageFlags;

/** Lower-case hex of an INTEGER's bytes, without the sign-padding zero bytes. */
export function serialHexOf(bytes: ArrayBuffer | Uint8Array): string {
  const hex = Buffer.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)).toString(
    'hex',
  );
  return hex.replace(/^(00)+(?=..)/, '');
}

function findExtension(asn: Certificate, id: string): Extension | undefined {
  return asn.tbsCertificate.extensions?.find((e) => e.extnID === id);
}

function extension<T>(asn: Certificate, id: string, type: new () => T): T | null {
  const found = findExtension(asn, id);
  return found === undefined ? null : AsnConvert.parse(found.extnValue, type);
}

/** Bytes that do not read as a DER X.509 certificate: 422 CERTIFICATE_INVALID. */
export class CertificateInvalid extends EngineError {
  constructor(message: string) {
    super('CERTIFICATE_INVALID', message);
  }
}

/**
 * Reads a DER certificate; anything that does not parse is the caller's bad input (422
 * CERTIFICATE_INVALID, naming which certificate when `label` says).
 */
export function readCertificate(der: Buffer, label = 'certificate'): CertificateFacts {
  const key = crypto.createHash('sha256').update(der).digest('hex');
  const known = readCertificates.get(key);
  if (known) return known;
  // Its own copy of the bytes: the caller's buffer may be a view into something reused.
  const facts = parseCertificate(Buffer.from(der), key, label);
  if (readCertificates.size >= maxReadCertificates) {
    readCertificates.delete(readCertificates.keys().next().value!);
  }
  readCertificates.set(key, facts);
  return facts;
}

/** The certificate's facts, or undefined when `der` does not parse as one. */
export function readCertificateIfAny(der: Buffer, label?: string): CertificateFacts | undefined {
  try {
    return readCertificate(der, label);
  } catch {
    return undefined;
  }
}

/**
 * The certificates read lately, by SHA-256 of their DER: every signature and every check reads
 * the same trust anchors, CA, TSA and seal certificates again, and parsing them three ways costs
 * more than the rest of a chain check. Facts follow from the bytes alone; the oldest go first.
 */
const readCertificates = new Map<string, CertificateFacts>();
const maxReadCertificates = 512;

function parseCertificate(der: Buffer, fingerprint: string, label: string): CertificateFacts {
  let asn: Certificate;
  let x509: crypto.X509Certificate;
  let parts: CertificateParts;
  try {
    asn = AsnConvert.parse(der, Certificate);
    x509 = new crypto.X509Certificate(der);
    parts = certificateParts(der);
  } catch {
    throw new CertificateInvalid(`The ${label} is not a DER X.509 certificate`);
  }
  try {
    const tbs = asn.tbsCertificate;
    const basic = extension(asn, id_ce_basicConstraints, BasicConstraints);
    const usage = extension(asn, id_ce_keyUsage, KeyUsage);
    const eku = extension(asn, id_ce_extKeyUsage, ExtendedKeyUsage);
    const ski = extension(asn, id_ce_subjectKeyIdentifier, SubjectKeyIdentifier);
    const aki = extension(asn, id_ce_authorityKeyIdentifier, AuthorityKeyIdentifier);
    const aia = extension(asn, id_pe_authorityInfoAccess, AuthorityInfoAccessSyntax);
    const cdp = extension(asn, id_ce_cRLDistributionPoints, CRLDistributionPoints);
    return {
      der,
      parts,
      x509,
      asn,
      fingerprint,
      serialHex: serialHexOf(tbs.serialNumber),
      notBefore: tbs.validity.notBefore.getTime(),
      notAfter: tbs.validity.notAfter.getTime(),
      basicConstraintsCa: basic === null ? null : basic.cA,
      pathLength: basic?.pathLenConstraint ?? null,
      keyUsage: usage === null ? null : usage.toNumber(),
      extendedKeyUsage: eku === null ? null : [...eku],
      extendedKeyUsageCritical: findExtension(asn, id_ce_extKeyUsage)?.critical === true,
      subjectKeyId: ski === null ? null : Buffer.from(ski.buffer),
      authorityKeyId:
        aki?.keyIdentifier === undefined ? null : Buffer.from(aki.keyIdentifier.buffer),
      ocspUrls: (aia ?? [])
        .filter((a) => a.accessMethod === cmsOids.ocspAccess)
        .map((a) => a.accessLocation.uniformResourceIdentifier)
        .filter((url): url is string => url !== undefined),
      crlUrls: (cdp ?? [])
        // A point limited to some reasons, or with another CRL issuer (indirect CRL), cannot
        // answer for every reason by itself; we only read full CRLs of the issuer.
        .filter((point) => point.reasons === undefined && point.cRLIssuer === undefined)
        .flatMap((point) => point.distributionPoint?.fullName ?? [])
        .map((name) => name.uniformResourceIdentifier)
        .filter((url): url is string => url !== undefined),
    };
  } catch {
    throw new CertificateInvalid(`The ${label} has an extension that does not parse`);
  }
}

export function hasKeyUsage(facts: CertificateFacts, bit: KeyUsageFlags): boolean {
  return facts.keyUsage === null || (facts.keyUsage & bit) !== 0;
}

/** Did `issuer`'s key sign `certificate`, with matching names (and key ids when both have one)? */
export function isIssuedBy(certificate: CertificateFacts, issuer: CertificateFacts): boolean {
  return namesMatch(certificate, issuer) && signatureVerifies(certificate, issuer);
}

export function namesMatch(certificate: CertificateFacts, issuer: CertificateFacts): boolean {
  if (!certificate.parts.issuer.equals(issuer.parts.subject)) return false;
  if (certificate.authorityKeyId !== null && issuer.subjectKeyId !== null) {
    return certificate.authorityKeyId.equals(issuer.subjectKeyId);
  }
  return true;
}

export function signatureVerifies(
  certificate: CertificateFacts,
  issuer: CertificateFacts,
): boolean {
  try {
    return certificate.x509.verify(issuer.x509.publicKey);
  } catch {
    return false;
  }
}

export function isSelfIssued(facts: CertificateFacts): boolean {
  return facts.parts.issuer.equals(facts.parts.subject);
}

/** The subject as a readable DN for messages (Node's rendering). */
export function subjectName(facts: CertificateFacts): string {
  return facts.x509.subject.replaceAll('\n', ', ');
}
