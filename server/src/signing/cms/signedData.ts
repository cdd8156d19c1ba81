import { createHash } from 'node:crypto';
import {
  certificateIssuerAndSerial,
  cmsOids,
  compareDerEncodings,
  contextTag,
  type DerElement,
  DerError,
  derBytes,
  derChildren,
  derElement,
  derObjectIdentifier,
  derOctetString,
  derSequence,
  derSetOf,
  derTag,
  derUnsignedInteger,
  derValue,
  readDerElement,
  readDerObjectIdentifier,
  readDerWhole,
} from '@esign/shared/cms';
import { ContentInfo, SignedData } from '@peculiar/asn1-cms';
import { AsnConvert } from '@peculiar/asn1-schema';
import { type MessageImprint, TSTInfo } from '@peculiar/asn1-tsp';
import { Certificate, id_ce_subjectKeyIdentifier, SubjectKeyIdentifier } from '@peculiar/asn1-x509';
import {
  type SignatureAlgorithm,
  sha256AlgorithmIdentifier,
  signatureAlgorithmFromIdentifier,
  signatureAlgorithmIdentifier,
} from './algorithms';
import { cmsErrors, fromSignedAttributesError } from './errors';

export interface SignedDataInput {
  /** The DER `SET OF Attribute` (tag 0x31) that was signed. */
  signedAttributes: Uint8Array;
  /** The signature value (ECDSA in DER: `verifyRawSignature` returns that form). */
  signature: Uint8Array;
  signatureAlgorithm: SignatureAlgorithm;
  /** DER certificates, the signer first, then the rest of its chain. */
  certificates: Uint8Array[];
  /** DER TimeStampToken over SHA-256 of the signature value, kept as the unsigned attribute. */
  timestampToken?: Uint8Array;
}

const version1 = derUnsignedInteger(Uint8Array.of(1));

function checkedCertificates(certificates: Uint8Array[]): Uint8Array[] {
  if (certificates.length === 0)
    throw cmsErrors.certificateMalformed('The certificate chain is empty');
  for (const [index, certificate] of certificates.entries()) {
    try {
      certificateIssuerAndSerial(certificate);
    } catch (error) {
      const mapped = fromSignedAttributesError(error);
      if (mapped instanceof Error && mapped !== error) {
        mapped.message = `certificateChain[${index}]: ${mapped.message}`;
      }
      throw mapped;
    }
  }
  return certificates;
}

/** The attributes must be a DER SET OF Attribute in DER order, or the signature cannot verify. */
function checkedSignedAttributes(signedAttributes: Uint8Array): Uint8Array {
  try {
    const set = readDerWhole(signedAttributes);
    if (set.tag !== derTag.set) throw new DerError('not a SET (tag 0x31)');
    const members = derChildren(signedAttributes, set);
    if (members.length === 0) throw new DerError('no attribute');
    for (const member of members) {
      const [type, values, extra] = derChildren(signedAttributes, member);
      if (member.tag !== derTag.sequence || !type || values?.tag !== derTag.set || extra) {
        throw new DerError('an attribute is not SEQUENCE { OBJECT IDENTIFIER, SET }');
      }
      readDerObjectIdentifier(signedAttributes, type);
    }
    const resorted = derSetOf(members.map((member) => derBytes(signedAttributes, member)));
    if (!Buffer.from(resorted).equals(Buffer.from(signedAttributes))) {
      throw new DerError('the attributes are not in DER SET OF order');
    }
    return signedAttributes;
  } catch (error) {
    if (!(error instanceof DerError)) throw error;
    throw cmsErrors.signedAttributesMalformed(
      `The signed attributes are not DER: ${error.message}`,
    );
  }
}

/**
 * A TimeStampToken is a ContentInfo holding SignedData whose content is a TSTInfo; the one a
 * signature carries has the SHA-256 of that signature value as its imprint (checked here too,
 * because a token for other bytes would make a CMS that every validator rejects).
 */
function checkedTimestampToken(token: Uint8Array, signature: Uint8Array): Uint8Array {
  let imprint: MessageImprint;
  try {
    readDerWhole(token);
    const contentInfo = AsnConvert.parse(token, ContentInfo);
    if (contentInfo.contentType !== cmsOids.signedData) throw new Error('not SignedData');
    const signedData = AsnConvert.parse(contentInfo.content, SignedData);
    if (signedData.encapContentInfo.eContentType !== cmsOids.tstInfo) {
      throw new Error('its content is not a TSTInfo');
    }
    const tstInfo = signedData.encapContentInfo.eContent?.single;
    if (!tstInfo) throw new Error('it holds no TSTInfo');
    imprint = AsnConvert.parse(tstInfo, TSTInfo).messageImprint;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw cmsErrors.timestampTokenMalformed(
      `The timestamp token is not a DER TimeStampToken: ${reason}`,
    );
  }
  const expected = createHash('sha256').update(signature).digest();
  if (
    imprint.hashAlgorithm.algorithm !== cmsOids.sha256 ||
    !expected.equals(Buffer.from(imprint.hashedMessage.buffer))
  ) {
    throw cmsErrors.timestampImprintMismatch(
      'The timestamp token is not over SHA-256 of this signature value (of its DER form for ECDSA)',
    );
  }
  return token;
}

/**
 * A detached CMS signature (RFC 5652 ContentInfo of SignedData v1) as PAdES
 * ETSI.CAdES.detached wants it: digest algorithm SHA-256, id-data without content, the
 * certificates, one SignerInfo v1 naming the signer by issuer and serial, the signed attributes
 * as given (the same bytes, tag [0]), and the timestamp token as the unsigned
 * signature-time-stamp attribute. The given bytes (attributes, certificates, token) are
 * embedded exactly; sets are in DER order. Throws a 4xx EngineError on malformed input.
 */
export function assembleSignedData(input: SignedDataInput): Buffer {
  const certificates = checkedCertificates(input.certificates);
  const signedAttributes = checkedSignedAttributes(input.signedAttributes);
  if (input.signature.length === 0) throw cmsErrors.signatureMalformed('The signature is empty');
  const timestampToken =
    input.timestampToken === undefined
      ? undefined
      : checkedTimestampToken(input.timestampToken, input.signature);
  const signer = certificateIssuerAndSerial(certificates[0] as Uint8Array);

  const signedAttributesImplicit = Uint8Array.from(signedAttributes);
  signedAttributesImplicit[0] = contextTag(0);
  const unsignedAttributes =
    timestampToken === undefined
      ? []
      : [
          derElement(
            contextTag(1),
            derSequence(
              derObjectIdentifier(cmsOids.signatureTimeStampToken),
              derSetOf([timestampToken]),
            ),
          ),
        ];
  const signerInfo = derSequence(
    version1,
    derSequence(signer.issuer, signer.serialNumber),
    sha256AlgorithmIdentifier(),
    signedAttributesImplicit,
    signatureAlgorithmIdentifier(input.signatureAlgorithm),
    derOctetString(input.signature),
    ...unsignedAttributes,
  );
  const signedData = derSequence(
    version1,
    derSetOf([sha256AlgorithmIdentifier()]),
    derSequence(derObjectIdentifier(cmsOids.data)),
    // [0] IMPLICIT CertificateSet: a SET OF, so in DER order (the signer is found by its sid).
    derElement(contextTag(0), ...[...certificates].sort(compareDerEncodings)),
    derSetOf([signerInfo]),
  );
  return Buffer.from(
    derSequence(derObjectIdentifier(cmsOids.signedData), derElement(contextTag(0), signedData)),
  );
}

/** The signer as a SignerInfo names it. */
export type SignerIdentifier =
  | { issuer: Buffer; serialNumber: Buffer }
  | { subjectKeyIdentifier: Buffer };

export interface ParsedSignedData {
  /** The signed attributes as signed (tag 0x31), or undefined when the SignerInfo has none. */
  signedAttributes: Buffer | undefined;
  signature: Buffer;
  /** The scheme of the SignerInfo's signatureAlgorithm, undefined if the engine does not know it. */
  signatureAlgorithm: SignatureAlgorithm | undefined;
  signatureAlgorithmOid: string;
  digestAlgorithmOid: string;
  signer: SignerIdentifier;
  /** The certificate the SignerInfo names, when SignedData carries it. */
  signerCertificate: Buffer | undefined;
  /** Every certificate SignedData carries, exact DER, in its order. */
  certificates: Buffer[];
  /** The signature-time-stamp unsigned attribute's TimeStampToken, exact DER. */
  timestampToken: Buffer | undefined;
  /**
   * Revocation values the CMS carries itself, exact DER: SignedData `crls` (CRLs, and OCSP
   * answers as id-ri-ocsp-response) and Adobe's signed adbe-revocationInfoArchival attribute.
   */
  revocationValues: { crls: Buffer[]; ocspResponses: Buffer[] };
}

const copyOf = (bytes: Uint8Array) => Buffer.from(bytes);

/** `crls [1] RevocationInfoChoices`: CertificateLists, and OCSP answers by RFC 5940. */
function revocationChoices(der: Uint8Array, crls: DerElement | undefined) {
  const found = { crls: [] as Buffer[], ocspResponses: [] as Buffer[] };
  for (const choice of crls ? derChildren(der, crls) : []) {
    if (choice.tag === derTag.sequence) {
      found.crls.push(copyOf(derBytes(der, choice)));
    } else if (choice.tag === contextTag(1)) {
      const [format, value] = derChildren(der, choice);
      if (
        format &&
        value &&
        readDerObjectIdentifier(der, format) === cmsOids.ocspResponseRevocationInfo
      ) {
        found.ocspResponses.push(copyOf(derBytes(der, value)));
      }
    }
  }
  return found;
}

/**
 * adbe-revocationInfoArchival among the signed attributes: `SEQUENCE { crl [0] EXPLICIT
 * SEQUENCE OF CertificateList, ocsp [1] EXPLICIT SEQUENCE OF OCSPResponse, ... }`.
 */
function adobeRevocationValues(attributes: Uint8Array | undefined) {
  const found = { crls: [] as Buffer[], ocspResponses: [] as Buffer[] };
  if (attributes === undefined) return found;
  for (const attribute of derChildren(attributes, readDerWhole(attributes))) {
    const [type, values] = derChildren(attributes, attribute);
    if (!type || !values) continue;
    if (readDerObjectIdentifier(attributes, type) !== cmsOids.adbeRevocationInfoArchival) continue;
    const [archival] = derChildren(attributes, values);
    for (const field of archival ? derChildren(attributes, archival) : []) {
      const [list] = derChildren(attributes, field);
      const items = list
        ? derChildren(attributes, list).map((item) => copyOf(derBytes(attributes, item)))
        : [];
      if (field.tag === contextTag(0)) found.crls.push(...items);
      if (field.tag === contextTag(1)) found.ocspResponses.push(...items);
    }
  }
  return found;
}

function ensure(condition: unknown, what: string): asserts condition {
  if (!condition) throw new DerError(what);
}

function childrenOf(
  bytes: Uint8Array,
  element: DerElement | undefined,
  what: string,
): DerElement[] {
  ensure(element, `no ${what}`);
  return derChildren(bytes, element);
}

function signerIdentifier(bytes: Uint8Array, sid: DerElement): SignerIdentifier {
  if (sid.tag === contextTag(0) || sid.tag === 0x80) {
    return { subjectKeyIdentifier: Buffer.from(derValue(bytes, sid)) };
  }
  const [issuer, serialNumber, extra] = childrenOf(bytes, sid, 'signer identifier');
  ensure(
    sid.tag === derTag.sequence &&
      issuer?.tag === derTag.sequence &&
      serialNumber?.tag === derTag.integer &&
      !extra,
    'the signer identifier is neither issuerAndSerialNumber nor subjectKeyIdentifier',
  );
  return {
    issuer: Buffer.from(derBytes(bytes, issuer)),
    serialNumber: Buffer.from(derBytes(bytes, serialNumber)),
  };
}

function isSigner(certificate: Buffer, signer: SignerIdentifier): boolean {
  if ('subjectKeyIdentifier' in signer) {
    const extension = AsnConvert.parse(certificate, Certificate).tbsCertificate.extensions?.find(
      (candidate) => candidate.extnID === id_ce_subjectKeyIdentifier,
    );
    if (!extension) return false;
    const keyIdentifier = AsnConvert.parse(extension.extnValue, SubjectKeyIdentifier);
    return Buffer.from(keyIdentifier.buffer).equals(signer.subjectKeyIdentifier);
  }
  const named = certificateIssuerAndSerial(certificate);
  return (
    Buffer.from(named.issuer).equals(signer.issuer) &&
    Buffer.from(named.serialNumber).equals(signer.serialNumber)
  );
}

/**
 * The pieces of a CMS signature for verification: exact bytes of the signed attributes (tag
 * set back to 0x31, as signed), the signature, certificates and timestamp token. Zero bytes
 * after the ContentInfo are allowed: they are the padding of a PDF's /Contents placeholder.
 * Throws 400 SIGNED_DATA_MALFORMED for anything that is not one SignedData with one SignerInfo.
 */
export function parseSignedData(der: Uint8Array): ParsedSignedData {
  try {
    const outer = readDerElement(der);
    ensure(
      der.subarray(outer.end).every((byte) => byte === 0),
      'bytes after the ContentInfo',
    );
    const contentInfoBytes = der.subarray(0, outer.end);
    // The schema parse checks the whole structure; the walk below keeps the exact bytes.
    const contentInfo = AsnConvert.parse(contentInfoBytes, ContentInfo);
    ensure(contentInfo.contentType === cmsOids.signedData, 'the ContentInfo is not SignedData');

    const [, explicit] = childrenOf(der, outer, 'ContentInfo');
    const [signedData] = childrenOf(der, explicit, 'content');
    const fields = childrenOf(der, signedData, 'SignedData');
    // @peculiar's RevocationInfoChoice knows only `other`, not a plain CertificateList: the
    // schema checks SignedData without its `crls`, which revocationChoices reads below.
    AsnConvert.parse(
      derSequence(...fields.filter((f) => f.tag !== contextTag(1)).map((f) => derBytes(der, f))),
      SignedData,
    );
    const [, digestAlgorithms, , ...rest] = fields;
    const signerInfos = rest.at(-1);
    const certificateSet = rest.find((field) => field.tag === contextTag(0));
    const crlSet = rest.find((field) => field.tag === contextTag(1));
    const certificates = certificateSet
      ? derChildren(der, certificateSet).map((cert) => Buffer.from(derBytes(der, cert)))
      : [];
    const infos = childrenOf(der, signerInfos, 'signerInfos');
    ensure(infos.length === 1, `${infos.length} SignerInfos where a PAdES signature has one`);
    ensure(childrenOf(der, digestAlgorithms, 'digestAlgorithms').length > 0, 'no digest algorithm');

    const [, sid, digestAlgorithm, ...signerRest] = childrenOf(der, infos[0], 'SignerInfo');
    ensure(sid && digestAlgorithm, 'a SignerInfo without signer or digest algorithm');
    const signedAttrs = signerRest[0]?.tag === contextTag(0) ? signerRest.shift() : undefined;
    const [signatureAlgorithm, signature, unsignedAttrs] = signerRest;
    ensure(signature?.tag === derTag.octetString, 'a SignerInfo without signature');
    const [algorithmOid, algorithmParameters] = childrenOf(
      der,
      signatureAlgorithm,
      'signatureAlgorithm',
    );
    ensure(algorithmOid, 'an empty signatureAlgorithm');
    const signatureAlgorithmOid = readDerObjectIdentifier(der, algorithmOid);
    const [digestOid] = childrenOf(der, digestAlgorithm, 'digestAlgorithm');
    ensure(digestOid, 'an empty digestAlgorithm');

    let timestampToken: Buffer | undefined;
    if (unsignedAttrs?.tag === contextTag(1)) {
      for (const attribute of derChildren(der, unsignedAttrs)) {
        const [type, values] = childrenOf(der, attribute, 'unsigned attribute');
        ensure(type && values, 'an unsigned attribute without values');
        if (readDerObjectIdentifier(der, type) !== cmsOids.signatureTimeStampToken) continue;
        const [token] = derChildren(der, values);
        ensure(token && timestampToken === undefined, 'signature-time-stamp attribute not single');
        timestampToken = Buffer.from(derBytes(der, token));
      }
    }

    const signer = signerIdentifier(der, sid);
    let signedAttributes: Buffer | undefined;
    if (signedAttrs) {
      signedAttributes = Buffer.from(derBytes(der, signedAttrs));
      signedAttributes[0] = derTag.set;
    }
    const inCrls = revocationChoices(der, crlSet);
    const inAttribute = adobeRevocationValues(signedAttributes);
    return {
      signedAttributes,
      signature: Buffer.from(derValue(der, signature)),
      signatureAlgorithm: signatureAlgorithmFromIdentifier(
        signatureAlgorithmOid,
        algorithmParameters && derBytes(der, algorithmParameters),
      ),
      signatureAlgorithmOid,
      digestAlgorithmOid: readDerObjectIdentifier(der, digestOid),
      signer,
      signerCertificate: certificates.find((certificate) => isSigner(certificate, signer)),
      certificates,
      timestampToken,
      revocationValues: {
        crls: [...inCrls.crls, ...inAttribute.crls],
        ocspResponses: [...inCrls.ocspResponses, ...inAttribute.ocspResponses],
      },
    };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw cmsErrors.signedDataMalformed(`The CMS signature cannot be read: ${reason}`);
  }
}
