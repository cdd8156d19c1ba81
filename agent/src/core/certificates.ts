import crypto from 'node:crypto';
import type { TokenCertificate } from '@esign/shared';
import { AsnConvert } from '@peculiar/asn1-schema';
import {
  AuthorityInfoAccessSyntax,
  Certificate,
  id_ad_caIssuers,
  id_ce_keyUsage,
  id_pe_authorityInfoAccess,
  KeyUsage,
  KeyUsageFlags,
} from '@peculiar/asn1-x509';
import { AgentFailure } from './errors';

/** A certificate read once: the parsed fields the agent decides on. */
export interface CertificateFacts {
  readonly der: Buffer;
  readonly x509: crypto.X509Certificate;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** Key usage allows signatures (digitalSignature or nonRepudiation); true when unrestricted. */
  readonly signs: boolean;
  readonly isCa: boolean;
  /** AIA caIssuers URLs (http and https only). */
  readonly caIssuers: readonly string[];
  readonly keyAlgorithm: 'rsa' | 'ec' | 'other';
  /** The public key as PKCS#11 key objects hold it: how a key is matched without CKA_ID. */
  readonly publicKey: CertificatePublicKey;
}

/**
 * RSA: modulus and public exponent (unsigned big-endian, no leading zero bytes); EC: the
 * curve's DER parameters (CKA_EC_PARAMS) and the uncompressed point (the bytes of the BIT
 * STRING, without the DER OCTET STRING that CKA_EC_POINT wraps it in).
 */
export type CertificatePublicKey =
  | { kind: 'rsa'; modulus: Buffer; publicExponent: Buffer }
  | { kind: 'ec'; params: Buffer; point: Buffer }
  | { kind: 'other' };

/**
 * Certificates read lately, by SHA-256 of their DER: every sign and list reads the token's
 * certificates and the intermediate folders again, and a schema parse costs far more than a
 * hash. The oldest go first. Facts are shared: callers never change them.
 */
const recentlyRead = new Map<string, CertificateFacts | undefined>();
const maxRecentlyRead = 512;

/** The facts of a DER certificate; undefined when it is not one. */
export function readCertificateFacts(der: Uint8Array): CertificateFacts | undefined {
  const key = crypto.createHash('sha256').update(der).digest('hex');
  if (recentlyRead.has(key)) return recentlyRead.get(key);
  const facts = parseCertificateFacts(der);
  if (recentlyRead.size >= maxRecentlyRead) recentlyRead.delete(recentlyRead.keys().next().value!);
  recentlyRead.set(key, facts);
  return facts;
}

function parseCertificateFacts(der: Uint8Array): CertificateFacts | undefined {
  let x509: crypto.X509Certificate;
  let asn: Certificate;
  try {
    x509 = new crypto.X509Certificate(Buffer.from(der));
    asn = AsnConvert.parse(der, Certificate);
  } catch {
    return undefined;
  }
  const extensions = asn.tbsCertificate.extensions ?? [];
  const keyUsage = extensions.find((extension) => extension.extnID === id_ce_keyUsage);
  let signs = true;
  if (keyUsage) {
    const flags = AsnConvert.parse(keyUsage.extnValue, KeyUsage).toNumber();
    signs = (flags & (KeyUsageFlags.digitalSignature | KeyUsageFlags.nonRepudiation)) !== 0;
  }
  const aia = extensions.find((extension) => extension.extnID === id_pe_authorityInfoAccess);
  const caIssuers = aia
    ? AsnConvert.parse(aia.extnValue, AuthorityInfoAccessSyntax)
        .filter((entry) => entry.accessMethod === id_ad_caIssuers)
        .flatMap((entry) => entry.accessLocation.uniformResourceIdentifier ?? [])
        .filter((url) => /^https?:\/\//i.test(url))
    : [];
  const type = x509.publicKey.asymmetricKeyType;
  const keyInfo = asn.tbsCertificate.subjectPublicKeyInfo;
  let publicKey: CertificatePublicKey = { kind: 'other' };
  if (type === 'rsa') {
    const jwk = x509.publicKey.export({ format: 'jwk' });
    publicKey = {
      kind: 'rsa',
      modulus: Buffer.from(jwk.n ?? '', 'base64url'),
      publicExponent: Buffer.from(jwk.e ?? '', 'base64url'),
    };
  } else if (type === 'ec' && keyInfo.algorithm.parameters) {
    publicKey = {
      kind: 'ec',
      params: Buffer.from(keyInfo.algorithm.parameters),
      point: Buffer.from(keyInfo.subjectPublicKey),
    };
  }
  return {
    der: Buffer.from(der),
    x509,
    notBefore: new Date(x509.validFrom),
    notAfter: new Date(x509.validTo),
    signs,
    isCa: x509.ca,
    caIssuers,
    keyAlgorithm: type === 'rsa' ? 'rsa' : type === 'ec' ? 'ec' : 'other',
    publicKey,
  };
}

/**
 * Why a person cannot sign with this certificate at `now`, for the log; undefined when they
 * can (signing usage, an end entity, an RSA or EC key, valid now).
 */
export function notForSigning(facts: CertificateFacts, now: Date): string | undefined {
  if (facts.isCa) return 'a CA certificate (used only to build chains)';
  if (!facts.signs) return 'its key usage allows no signature (e.g. an encryption certificate)';
  if (facts.keyAlgorithm === 'other') {
    return `its key type (${facts.x509.publicKey.asymmetricKeyType ?? 'unknown'}) is not RSA or EC`;
  }
  if (now < facts.notBefore) return `not valid before ${facts.notBefore.toISOString()}`;
  if (now > facts.notAfter) return `expired on ${facts.notAfter.toISOString()}`;
  return undefined;
}

/** A certificate a person can sign with: signing usage, an end entity, valid at `now`. */
export function isSigningCertificate(facts: CertificateFacts, now: Date): boolean {
  return notForSigning(facts, now) === undefined;
}

/** Where `sign` finds a certificate again: the token, the key's CKA_ID, the certificate. */
export interface CertificateLocator {
  serialNumber: string;
  label: string;
  keyId: Buffer;
  /** First 8 bytes of SHA-256 of the certificate: another certificate under the same id is refused. */
  certificateHash: Buffer;
}

/** What names a token in a certificate id (a present token, as the registry lists it). */
export interface TokenIdentity {
  label: string;
  serialNumber: string;
}

/** Opaque to pages: `v1.<serial hex>.<label hex>.<CKA_ID hex>.<certificate hash prefix>`. */
export function certificateIdOf(token: TokenIdentity, keyId: Uint8Array, der: Uint8Array): string {
  const hex = (text: string) => Buffer.from(text, 'utf8').toString('hex');
  return [
    'v1',
    hex(token.serialNumber),
    hex(token.label),
    Buffer.from(keyId).toString('hex'),
    certificateHashPrefix(der).toString('hex'),
  ].join('.');
}

export function certificateHashPrefix(der: Uint8Array): Buffer {
  return crypto.createHash('sha256').update(der).digest().subarray(0, 8);
}

export function parseCertificateId(certificateId: string): CertificateLocator {
  const match =
    /^v1\.((?:[0-9a-f]{2})*)\.((?:[0-9a-f]{2})*)\.((?:[0-9a-f]{2})*)\.([0-9a-f]{16})$/.exec(
      certificateId,
    );
  if (!match) {
    throw new AgentFailure('CERTIFICATE_NOT_FOUND', 'certificateId is not one this agent gave');
  }
  return {
    serialNumber: Buffer.from(match[1]!, 'hex').toString('utf8'),
    label: Buffer.from(match[2]!, 'hex').toString('utf8'),
    keyId: Buffer.from(match[3]!, 'hex'),
    certificateHash: Buffer.from(match[4]!, 'hex'),
  };
}

/** RFC 4514 order (most specific first) from Node's one-attribute-a-line form. */
function distinguishedName(lines: string): string {
  return lines.split('\n').filter(Boolean).reverse().join(',');
}

/** The protocol's description of a signing certificate on a token. */
export function describeCertificate(
  token: TokenIdentity,
  keyId: Uint8Array,
  facts: CertificateFacts,
): TokenCertificate {
  return {
    certificateId: certificateIdOf(token, keyId, facts.der),
    certificate: facts.der.toString('base64'),
    subject: distinguishedName(facts.x509.subject).slice(0, 4096),
    issuer: distinguishedName(facts.x509.issuer).slice(0, 4096),
    serialNumber: facts.x509.serialNumber,
    notBefore: facts.notBefore.toISOString(),
    notAfter: facts.notAfter.toISOString(),
    tokenLabel: token.label.slice(0, 64),
    tokenSerial: token.serialNumber.slice(0, 64),
    keyAlgorithm: facts.keyAlgorithm === 'ec' ? 'ec' : 'rsa',
    keyId: Buffer.from(keyId).toString('hex'),
  };
}
