import { createHash } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import { Certificate } from '@peculiar/asn1-x509';
import {
  contextTag,
  DerError,
  derBytes,
  derChildren,
  derElement,
  derNull,
  derObjectIdentifier,
  derOctetString,
  derSequence,
  derSetOf,
  derTag,
  readDerWhole,
} from './der';
import { cmsOids } from './oids';

export type SignedAttributesProblem = 'DOCUMENT_DIGEST_INVALID' | 'CERTIFICATE_MALFORMED';

/**
 * Bad input to the attribute builder. `code` is stable, so the server maps it to its 4xx and
 * the agent to its own message; `field` names the input at fault.
 */
export class SignedAttributesError extends Error {
  readonly code: SignedAttributesProblem;
  readonly field: 'documentDigest' | 'signerCertificate';

  constructor(
    code: SignedAttributesProblem,
    field: SignedAttributesError['field'],
    message: string,
  ) {
    super(message);
    this.name = 'SignedAttributesError';
    this.code = code;
    this.field = field;
  }
}

const SHA256_LENGTH = 32;

function sha256(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(bytes).digest());
}

/**
 * The issuer Name and the serial number INTEGER of a DER X.509 certificate, both as the exact
 * DER elements the certificate holds (what signing-certificate-v2 and a CMS SignerInfo's
 * issuerAndSerialNumber name it by). Throws `CERTIFICATE_MALFORMED` for anything else: PEM,
 * garbage, truncated or trailing bytes.
 */
export function certificateIssuerAndSerial(certificate: Uint8Array): {
  issuer: Uint8Array;
  serialNumber: Uint8Array;
} {
  const key = createHash('sha256').update(certificate).digest('hex');
  let named = namedCertificates.get(key);
  if (named === undefined) {
    named = readIssuerAndSerial(certificate);
    if (namedCertificates.size >= maxNamedCertificates) {
      namedCertificates.delete(namedCertificates.keys().next().value!);
    }
    namedCertificates.set(key, named);
  }
  // Copies: what is remembered stays as it was read, whatever a caller does with its result.
  return { issuer: named.issuer.slice(), serialNumber: named.serialNumber.slice() };
}

/**
 * Issuers and serials read lately, by SHA-256 of the certificate: one signature names the same
 * signer and TSA certificates several times (attributes built, then rebuilt and checked), and
 * the schema parse of a certificate costs far more than its hash. The oldest go first.
 */
const namedCertificates = new Map<string, { issuer: Uint8Array; serialNumber: Uint8Array }>();
const maxNamedCertificates = 256;

function readIssuerAndSerial(certificate: Uint8Array): {
  issuer: Uint8Array;
  serialNumber: Uint8Array;
} {
  try {
    // The schema parse validates the whole certificate; the DER walk then slices the issuer and
    // serial exactly as the certificate holds them (a re-encoded Name could differ from them).
    AsnConvert.parse(certificate, Certificate);
    const outer = readDerWhole(certificate);
    const [tbs] = derChildren(certificate, outer);
    if (!tbs) throw new DerError('no tbsCertificate');
    const fields = derChildren(certificate, tbs);
    const withoutVersion = fields[0]?.tag === contextTag(0) ? fields.slice(1) : fields;
    const [serial, , issuer] = withoutVersion;
    if (serial?.tag !== derTag.integer || issuer?.tag !== derTag.sequence) {
      throw new DerError('no serial number and issuer where X.509 puts them');
    }
    // Copies, not views: the caller's buffer may be reused after this call.
    return {
      issuer: derBytes(certificate, issuer).slice(),
      serialNumber: derBytes(certificate, serial).slice(),
    };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new SignedAttributesError(
      'CERTIFICATE_MALFORMED',
      'signerCertificate',
      `The signer certificate is not a DER X.509 certificate: ${reason}`,
    );
  }
}

/**
 * The value of an ESS signing-certificate-v2 attribute (RFC 5035) naming `certificate` (DER):
 * one ESSCertIDv2 with the certificate's SHA-256 (hashAlgorithm omitted, it defaults to
 * SHA-256) and issuerSerial (its issuer as a directoryName, and its serial). CMS signers and
 * RFC 3161 TSAs bind their certificate with it.
 */
export function signingCertificateV2(certificate: Uint8Array): Uint8Array {
  const { issuer, serialNumber } = certificateIssuerAndSerial(certificate);
  const essCertIdV2 = derSequence(
    derOctetString(sha256(certificate)),
    // IssuerSerial ::= SEQUENCE { issuer GeneralNames, serialNumber }; directoryName is [4]
    // EXPLICIT because Name is a CHOICE.
    derSequence(derSequence(derElement(contextTag(4), issuer)), serialNumber),
  );
  return derSequence(derSequence(essCertIdV2));
}

function attribute(oid: string, value: Uint8Array): Uint8Array {
  return derSequence(derObjectIdentifier(oid), derSetOf([value]));
}

/**
 * The CMS signed attributes of a signature over a prepared PDF revision, as the DER `SET OF
 * Attribute` that is signed (tag 0x31; inside SignerInfo the same bytes carry tag [0]):
 * content-type id-data, message-digest `documentDigest`, and signing-certificate-v2 (RFC 5035)
 * with one ESSCertIDv2: SHA-256 of the certificate (hashAlgorithm omitted, it defaults to
 * SHA-256) and issuerSerial (the certificate's issuer as a directoryName, and its serial).
 * No signing-time: PAdES keeps the time in the signature dictionary's /M. The result is a pure
 * function of its inputs, so the agent, the server and a partner's client get the same bytes.
 */
export function buildSignedAttributes(
  documentDigest: Uint8Array,
  signerCertificate: Uint8Array,
): Uint8Array {
  if (!(documentDigest instanceof Uint8Array) || documentDigest.length !== SHA256_LENGTH) {
    throw new SignedAttributesError(
      'DOCUMENT_DIGEST_INVALID',
      'documentDigest',
      `The document digest must be the ${SHA256_LENGTH} bytes of a SHA-256 digest`,
    );
  }
  if (!(signerCertificate instanceof Uint8Array)) {
    throw new SignedAttributesError(
      'CERTIFICATE_MALFORMED',
      'signerCertificate',
      'The signer certificate must be DER bytes',
    );
  }
  return derSetOf([
    attribute(cmsOids.contentType, derObjectIdentifier(cmsOids.data)),
    attribute(cmsOids.messageDigest, derOctetString(documentDigest)),
    attribute(cmsOids.signingCertificateV2, signingCertificateV2(signerCertificate)),
  ]);
}

/**
 * SHA-256 of the signed attributes: what a token signs when given a digest (CKM_RSA_PKCS with
 * `digestInfoSha256` of it, CKM_ECDSA with it as is). With CKM_SHA256_RSA_PKCS or
 * CKM_ECDSA_SHA256 the token is given the attributes themselves and hashes them.
 */
export function signedAttributesDigest(signedAttributes: Uint8Array): Uint8Array {
  return sha256(signedAttributes);
}

/** PKCS#1 v1.5 DigestInfo for a SHA-256 digest: what a raw RSA PKCS#1 mechanism signs. */
export function digestInfoSha256(digest: Uint8Array): Uint8Array {
  if (!(digest instanceof Uint8Array) || digest.length !== SHA256_LENGTH) {
    throw new SignedAttributesError(
      'DOCUMENT_DIGEST_INVALID',
      'documentDigest',
      `A SHA-256 digest is ${SHA256_LENGTH} bytes`,
    );
  }
  // RFC 8017 9.2 note 1: AlgorithmIdentifier with NULL parameters, as every token expects.
  return derSequence(
    derSequence(derObjectIdentifier(cmsOids.sha256), derNull),
    derOctetString(digest),
  );
}
