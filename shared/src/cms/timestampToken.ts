import {
  contextTag,
  type DerElement,
  DerError,
  derBytes,
  derChildren,
  derTag,
  derValue,
  readDerObjectIdentifier,
  readDerWhole,
} from './der';
import { cmsOids } from './oids';
import { certificateIssuerAndSerial } from './signedAttributes';
import { firstSignerSignedAttributes } from './signerInfo';

const derGeneralizedTime = 0x18;
const derBoolean = 0x01;
/** SubjectKeyIdentifier as a SignerIdentifier: `[0] IMPLICIT OCTET STRING` (primitive). */
const sidKeyIdentifierTag = 0x80;

/** Why a token cannot be read: not CMS SignedData at all, or SignedData without a TSTInfo. */
export type TimestampTokenProblem = 'MALFORMED' | 'NOT_TST_INFO';

export class TimestampTokenError extends Error {
  constructor(
    readonly problem: TimestampTokenProblem,
    message: string,
  ) {
    super(message);
    this.name = 'TimestampTokenError';
  }
}

/** One signed attribute: its type and the DER of each of its values. */
export interface TokenAttribute {
  type: string;
  values: Uint8Array[];
}

/**
 * An RFC 3161 TimeStampToken read from its DER by the strict reader (no schema library: a
 * token is read on every signature, by the agent and by the server, and a schema parse of it
 * costs milliseconds). Every byte array is a view into the token as it was given.
 */
export interface DecodedTimestampToken {
  tstInfo: {
    /** The exact TSTInfo bytes: what the message-digest attribute covers. */
    bytes: Uint8Array;
    policy: string;
    imprintAlgorithm: string;
    hashedMessage: Uint8Array;
    /** The serialNumber INTEGER's value bytes (two's complement, as encoded). */
    serialNumber: Uint8Array;
    genTime: Date;
    /** The nonce INTEGER's value bytes when present. */
    nonce: Uint8Array | undefined;
  };
  signer: {
    /** issuerAndSerialNumber (exact DER of the Name and of the INTEGER) or subjectKeyIdentifier. */
    sid: { issuer: Uint8Array; serialNumber: Uint8Array } | { subjectKeyIdentifier: Uint8Array };
    digestAlgorithm: string;
    signatureAlgorithm: string;
    signature: Uint8Array;
    /** The signed attributes as signed (re-tagged SET OF), undefined when there are none. */
    signedAttributes: Uint8Array | undefined;
    attributes: TokenAttribute[];
  };
  /** The DER of every certificate the token carries (other certificate choices skipped). */
  certificates: Uint8Array[];
}

function malformed(message: string): never {
  throw new TimestampTokenError('MALFORMED', message);
}

function child(children: DerElement[], index: number, tag: number, what: string) {
  const element = children[index];
  if (element?.tag !== tag) malformed(`${what} missing or of the wrong type`);
  return element;
}

/** The OID of an AlgorithmIdentifier SEQUENCE. */
function algorithmOf(bytes: Uint8Array, element: DerElement, what: string): string {
  const [algorithm] = derChildren(bytes, element);
  if (algorithm?.tag !== derTag.objectIdentifier) malformed(`${what} has no algorithm`);
  return readDerObjectIdentifier(bytes, algorithm);
}

/** GeneralizedTime as RFC 3161 and DER want it: YYYYMMDDHHMMSS[.fraction]Z. */
function generalizedTime(text: string): Date {
  const match = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.(\d*[1-9]))?Z$/.exec(text);
  if (!match) throw new TimestampTokenError('NOT_TST_INFO', `genTime "${text}" is not DER`);
  const [, year, month, day, hour, minute, second, fraction] = match;
  const milliseconds = fraction ? Math.floor(Number(`0.${fraction}`) * 1000) : 0;
  const date = new Date(
    Date.UTC(+year!, +month! - 1, +day!, +hour!, +minute!, +second!, milliseconds),
  );
  if (Number.isNaN(date.getTime()) || date.getUTCDate() !== +day!) {
    throw new TimestampTokenError('NOT_TST_INFO', `genTime "${text}" is not a date`);
  }
  return date;
}

function readTstInfo(bytes: Uint8Array): DecodedTimestampToken['tstInfo'] {
  const fields = derChildren(bytes, readDerWhole(bytes));
  const [version, policy, imprint, serial, genTime] = fields;
  if (
    version?.tag !== derTag.integer ||
    policy?.tag !== derTag.objectIdentifier ||
    imprint?.tag !== derTag.sequence ||
    serial?.tag !== derTag.integer ||
    genTime?.tag !== derGeneralizedTime
  ) {
    throw new TimestampTokenError('NOT_TST_INFO', 'the TSTInfo lacks its required fields');
  }
  const [imprintAlgorithm, hashedMessage] = derChildren(bytes, imprint);
  if (imprintAlgorithm?.tag !== derTag.sequence || hashedMessage?.tag !== derTag.octetString) {
    throw new TimestampTokenError('NOT_TST_INFO', 'the messageImprint is not readable');
  }
  // After genTime: accuracy SEQUENCE, ordering BOOLEAN, nonce INTEGER, tsa [0], extensions [1].
  let rest = fields.slice(5);
  if (rest[0]?.tag === derTag.sequence) rest = rest.slice(1);
  if (rest[0]?.tag === derBoolean) rest = rest.slice(1);
  const nonce = rest[0]?.tag === derTag.integer ? derValue(bytes, rest[0]) : undefined;
  return {
    bytes,
    policy: readDerObjectIdentifier(bytes, policy),
    imprintAlgorithm: algorithmOf(bytes, imprintAlgorithm, 'the messageImprint'),
    hashedMessage: derValue(bytes, hashedMessage),
    serialNumber: derValue(bytes, serial),
    genTime: generalizedTime(Buffer.from(derValue(bytes, genTime)).toString('latin1')),
    nonce,
  };
}

function readAttributes(bytes: Uint8Array, signedAttributes: DerElement): TokenAttribute[] {
  return derChildren(bytes, signedAttributes).map((attribute) => {
    const [type, values] = derChildren(bytes, attribute);
    if (type?.tag !== derTag.objectIdentifier || values?.tag !== derTag.set) {
      malformed('a signed attribute is not a type and a SET of values');
    }
    return {
      type: readDerObjectIdentifier(bytes, type),
      values: derChildren(bytes, values).map((value) => derBytes(bytes, value)),
    };
  });
}

function readSigner(
  bytes: Uint8Array,
  signerInfo: DerElement,
  signedDataBytes: Uint8Array,
): DecodedTimestampToken['signer'] {
  const fields = derChildren(bytes, signerInfo);
  const [version, sid, digestAlgorithm] = fields;
  if (version?.tag !== derTag.integer || sid === undefined) malformed('the SignerInfo is cut');
  let signerId: DecodedTimestampToken['signer']['sid'];
  if (sid.tag === derTag.sequence) {
    const [issuer, serialNumber] = derChildren(bytes, sid);
    if (issuer?.tag !== derTag.sequence || serialNumber?.tag !== derTag.integer) {
      malformed('the issuerAndSerialNumber is not a Name and an INTEGER');
    }
    signerId = { issuer: derBytes(bytes, issuer), serialNumber: derBytes(bytes, serialNumber) };
  } else if (sid.tag === sidKeyIdentifierTag) {
    signerId = { subjectKeyIdentifier: derValue(bytes, sid) };
  } else {
    malformed('the SignerInfo names its signer in an unknown way');
  }
  if (digestAlgorithm?.tag !== derTag.sequence) malformed('the SignerInfo has no digest algorithm');
  let index = 3;
  const attributesElement = fields[index]?.tag === contextTag(0) ? fields[index] : undefined;
  if (attributesElement) index += 1;
  const signatureAlgorithm = child(fields, index, derTag.sequence, 'signatureAlgorithm');
  const signature = child(fields, index + 1, derTag.octetString, 'signature');
  return {
    sid: signerId,
    digestAlgorithm: algorithmOf(bytes, digestAlgorithm, 'the digest algorithm'),
    signatureAlgorithm: algorithmOf(bytes, signatureAlgorithm, 'the signature algorithm'),
    signature: derValue(bytes, signature),
    signedAttributes: attributesElement ? firstSignerSignedAttributes(signedDataBytes) : undefined,
    attributes: attributesElement ? readAttributes(bytes, attributesElement) : [],
  };
}

/**
 * Reads a TimeStampToken (ContentInfo → SignedData with exactly one SignerInfo → TSTInfo).
 * Checks structure only: imprint, signature and certificates are the caller's to judge.
 * Throws TimestampTokenError.
 */
export function decodeTimestampToken(token: Uint8Array): DecodedTimestampToken {
  try {
    const contentInfo = derChildren(token, readDerWhole(token));
    const contentType = child(contentInfo, 0, derTag.objectIdentifier, 'contentType');
    if (readDerObjectIdentifier(token, contentType) !== cmsOids.signedData) {
      malformed('the content type is not SignedData');
    }
    const explicit = child(contentInfo, 1, contextTag(0), 'content');
    const [signedData] = derChildren(token, explicit);
    if (signedData?.tag !== derTag.sequence) malformed('the content is not a SignedData');
    const fields = derChildren(token, signedData);
    const encapsulated = child(fields, 2, derTag.sequence, 'encapContentInfo');
    const [eContentType, eContent] = derChildren(token, encapsulated);
    if (
      eContentType?.tag !== derTag.objectIdentifier ||
      readDerObjectIdentifier(token, eContentType) !== cmsOids.tstInfo
    ) {
      throw new TimestampTokenError('NOT_TST_INFO', 'the encapsulated content is not a TSTInfo');
    }
    const [octets] = eContent?.tag === contextTag(0) ? derChildren(token, eContent) : [];
    if (octets?.tag !== derTag.octetString) {
      throw new TimestampTokenError('NOT_TST_INFO', 'the TSTInfo is missing');
    }
    let tstInfo: DecodedTimestampToken['tstInfo'];
    try {
      tstInfo = readTstInfo(derValue(token, octets));
    } catch (error) {
      if (error instanceof DerError) {
        throw new TimestampTokenError(
          'NOT_TST_INFO',
          `the TSTInfo does not parse (${error.message})`,
        );
      }
      throw error;
    }
    const certificatesElement = fields.find((field) => field.tag === contextTag(0));
    const certificates = certificatesElement
      ? derChildren(token, certificatesElement)
          .filter((choice) => choice.tag === derTag.sequence)
          .map((choice) => derBytes(token, choice))
      : [];
    const signerInfos = fields.at(-1);
    if (signerInfos?.tag !== derTag.set) malformed('no SignerInfos');
    const signers = derChildren(token, signerInfos);
    if (signers.length !== 1) malformed(`${signers.length} signers instead of the TSA alone`);
    const signer = readSigner(token, signers[0]!, derBytes(token, signedData));
    return { tstInfo, signer, certificates };
  } catch (error) {
    if (error instanceof DerError) malformed(`not a DER CMS SignedData (${error.message})`);
    throw error;
  }
}

/** The subjectKeyIdentifier extension's key id of a DER certificate, undefined when absent. */
function subjectKeyIdentifier(certificate: Uint8Array): Uint8Array | undefined {
  const [tbs] = derChildren(certificate, readDerWhole(certificate));
  if (tbs === undefined) return undefined;
  const extensions = derChildren(certificate, tbs).find((field) => field.tag === contextTag(3));
  const [list] = extensions ? derChildren(certificate, extensions) : [];
  for (const extension of list ? derChildren(certificate, list) : []) {
    const parts = derChildren(certificate, extension);
    if (
      parts[0]?.tag !== derTag.objectIdentifier ||
      readDerObjectIdentifier(certificate, parts[0]) !== cmsOids.subjectKeyIdentifier
    ) {
      continue;
    }
    const value = parts.at(-1);
    if (value?.tag !== derTag.octetString) return undefined;
    const wrapped = derValue(certificate, value);
    const keyId = readDerWhole(wrapped);
    return keyId.tag === derTag.octetString ? derValue(wrapped, keyId) : undefined;
  }
  return undefined;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

/**
 * The certificate among the token's that its SignerInfo names (issuer and serial, or subject
 * key identifier); undefined when the token does not carry it. Certificates that do not parse
 * are passed over (the caller reads the one returned with its own X.509 reader).
 */
export function timestampSignerCertificate(decoded: DecodedTimestampToken): Uint8Array | undefined {
  const { sid } = decoded.signer;
  return decoded.certificates.find((certificate) => {
    try {
      if ('subjectKeyIdentifier' in sid) {
        const keyId = subjectKeyIdentifier(certificate);
        return keyId !== undefined && sameBytes(keyId, sid.subjectKeyIdentifier);
      }
      const named = certificateIssuerAndSerial(certificate);
      return sameBytes(named.issuer, sid.issuer) && sameBytes(named.serialNumber, sid.serialNumber);
    } catch {
      return false;
    }
  });
}

const pkiStatusNames = [
  'granted',
  'grantedWithMods',
  'rejection',
  'waiting',
  'revocationWarning',
  'revocationNotification',
];
const failInfoNames: Record<number, string> = {
  0: 'badAlg',
  2: 'badRequest',
  5: 'badDataFormat',
  14: 'timeNotAvailable',
  15: 'unacceptedPolicy',
  16: 'unacceptedExtension',
  17: 'addInfoNotAvailable',
  25: 'systemFailure',
};
const derUtf8String = 0x0c;
const derBitString = 0x03;

/** A TimeStampResp (RFC 3161 2.4.2): its status and, when granted, the token's exact bytes. */
export interface TimestampResponse {
  status: number;
  /** The status's name (granted, rejection, ...) or its number. */
  statusName: string;
  granted: boolean;
  /** statusString's texts and failInfo's bit names, for messages. */
  statusText: string[];
  failInfo: string[];
  token: Uint8Array | undefined;
}

/** Reads a DER TimeStampResp; throws TimestampTokenError MALFORMED when it is not one. */
export function readTimestampResponse(reply: Uint8Array): TimestampResponse {
  try {
    const [statusInfo, token] = derChildren(reply, readDerWhole(reply));
    if (statusInfo?.tag !== derTag.sequence) malformed('no PKIStatusInfo');
    const [statusElement, ...more] = derChildren(reply, statusInfo);
    if (statusElement?.tag !== derTag.integer) malformed('no PKIStatus');
    const statusBytes = derValue(reply, statusElement);
    if (statusBytes.length !== 1) malformed('a PKIStatus out of range');
    const status = statusBytes[0]!;
    const statusText: string[] = [];
    const failInfo: string[] = [];
    for (const element of more) {
      if (element.tag === derTag.sequence) {
        for (const text of derChildren(reply, element)) {
          if (text.tag === derUtf8String) {
            statusText.push(Buffer.from(derValue(reply, text)).toString('utf8'));
          }
        }
      } else if (element.tag === derBitString) {
        const bits = derValue(reply, element).subarray(1);
        bits.forEach((byte, index) => {
          for (let bit = 0; bit < 8; bit++) {
            if (byte & (0x80 >> bit)) {
              const number = index * 8 + bit;
              failInfo.push(failInfoNames[number] ?? `bit ${number}`);
            }
          }
        });
      }
    }
    if (token !== undefined && token.tag !== derTag.sequence) malformed('the token is not CMS');
    return {
      status,
      statusName: pkiStatusNames[status] ?? String(status),
      granted: status === 0 || status === 1,
      statusText,
      failInfo,
      token: token ? derBytes(reply, token) : undefined,
    };
  } catch (error) {
    if (error instanceof DerError) malformed(`not a DER TimeStampResp (${error.message})`);
    throw error;
  }
}
