import crypto from 'node:crypto';
import {
  cmsOids,
  compareDerEncodings,
  derObjectIdentifier,
  derOctetString,
  derSetOf,
  hashOf,
  signingCertificateV2,
} from '@esign/shared/cms';
import {
  Attribute,
  CertificateChoices,
  CertificateSet,
  DigestAlgorithmIdentifiers,
  EncapsulatedContent,
  EncapsulatedContentInfo,
  IssuerAndSerialNumber,
  SignedData,
  SignerIdentifier,
  SignerInfo,
  SignerInfos,
} from '@peculiar/asn1-cms';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import {
  Accuracy,
  id_ct_tstInfo,
  PKIFailureInfo,
  PKIFailureInfoFlags,
  PKIStatus,
  PKIStatusInfo,
  TimeStampReq,
  TimeStampResp,
  TimeStampToken,
  TSTInfo,
} from '@peculiar/asn1-tsp';
import { AlgorithmIdentifier, Certificate } from '@peculiar/asn1-x509';
import { DomainError } from '../errors/domainError';
import type { Clock } from '../platform/clock';

/**
 * The TSA's key and certificates, whatever holds them (the development identity today, the
 * development CA's key store at integration). `sign` is RSA PKCS#1 v1.5 with SHA-256 over `data`.
 */
export interface TsaSigner {
  /** DER, the TSA certificate first, then its issuers. */
  certificateChain: Buffer[];
  sign(data: Buffer): Promise<Buffer>;
}

export interface TimestampResponderDeps {
  clock: Clock;
  tsaSigner: TsaSigner;
}

/** The development TSA's policy: an OID under 2.999, the arc ITU-T keeps for examples. */
export const developmentTsaPolicy = '2.999.3161.1';

const digestLengths: Record<string, number> = { sha256: 32, sha384: 48, sha512: 64 };

/** A request that is not a TimeStampReq at all: HTTP 400 (anything parsed gets an RFC answer). */
export function timestampRequestInvalid(message: string): DomainError {
  return new DomainError('TIMESTAMP_REQUEST_INVALID', message);
}

/** A rejection TimeStampResp (HTTP 200, as RFC 3161 answers a request it will not grant). */
function rejection(failure: PKIFailureInfoFlags): Buffer {
  const failInfo = new PKIFailureInfo();
  failInfo.fromNumber(failure);
  const response = new TimeStampResp({
    status: new PKIStatusInfo({ status: PKIStatus.rejection, failInfo }),
  });
  return Buffer.from(AsnConvert.serialize(response));
}

function attribute(type: string, value: Uint8Array): Attribute {
  return new Attribute({ attrType: type, attrValues: [new Uint8Array(value).buffer] });
}

/** A positive 128-bit serial number, unique in practice without any state. */
function serialNumber(): ArrayBuffer {
  const bytes = crypto.randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return new Uint8Array(bytes).buffer;
}

/**
 * Answers one DER TimeStampReq with a DER TimeStampResp (RFC 3161): a token over the request's
 * imprint, signed by the TSA at the clock's time, with the request's nonce, and the TSA's
 * certificates when asked. A request it cannot honour gets a rejection with the RFC failure
 * info; bytes that are not a TimeStampReq throw 400 TIMESTAMP_REQUEST_INVALID.
 */
export async function timestampResponse(
  deps: TimestampResponderDeps,
  requestDer: Buffer,
): Promise<Buffer> {
  let request: TimeStampReq;
  try {
    request = AsnConvert.parse(requestDer, TimeStampReq);
  } catch (error) {
    throw timestampRequestInvalid(
      `The body is not a DER TimeStampReq (${(error as Error).message})`,
    );
  }
  if (request.version !== 1) return rejection(PKIFailureInfoFlags.badRequest);
  const hash = hashOf(request.messageImprint.hashAlgorithm.algorithm);
  const expectedLength = hash === undefined ? undefined : digestLengths[hash];
  if (expectedLength === undefined) return rejection(PKIFailureInfoFlags.badAlg);
  if (request.messageImprint.hashedMessage.byteLength !== expectedLength) {
    return rejection(PKIFailureInfoFlags.badDataFormat);
  }
  if (request.reqPolicy !== undefined && request.reqPolicy !== developmentTsaPolicy) {
    return rejection(PKIFailureInfoFlags.unacceptedPolicy);
  }
  if (request.extensions !== undefined && request.extensions.length > 0) {
    return rejection(PKIFailureInfoFlags.unacceptedExtension);
  }

  const [tsaCertificate] = deps.tsaSigner.certificateChain;
  if (tsaCertificate === undefined) throw new Error('TsaSigner without a certificate');
  // Whole seconds: the accuracy is one second, and DER forbids trailing zeros in fractions.
  const genTime = new Date(Math.floor(deps.clock.now().getTime() / 1000) * 1000);
  const tstInfo = new TSTInfo({
    version: 1,
    policy: developmentTsaPolicy,
    messageImprint: request.messageImprint,
    serialNumber: serialNumber(),
    genTime,
    accuracy: new Accuracy({ seconds: 1 }),
    ordering: false,
    ...(request.nonce !== undefined ? { nonce: request.nonce } : {}),
  });
  const tstInfoBytes = Buffer.from(AsnConvert.serialize(tstInfo));

  const attributes = [
    attribute(cmsOids.contentType, derObjectIdentifier(id_ct_tstInfo)),
    attribute(
      cmsOids.messageDigest,
      derOctetString(crypto.createHash('sha256').update(tstInfoBytes).digest()),
    ),
    attribute(cmsOids.signingCertificateV2, signingCertificateV2(tsaCertificate)),
  ]
    .map((value) => ({ value, der: Buffer.from(AsnConvert.serialize(value)) }))
    .sort((a, b) => compareDerEncodings(a.der, b.der));
  // What is signed is the DER SET OF, in the order it is then written with the [0] tag.
  const signedAttributes = derSetOf(attributes.map(({ der }) => der));
  const signature = await deps.tsaSigner.sign(
    Buffer.from(signedAttributes.buffer, signedAttributes.byteOffset, signedAttributes.byteLength),
  );

  const certificate = AsnConvert.parse(tsaCertificate, Certificate);
  const sha256 = new AlgorithmIdentifier({ algorithm: cmsOids.sha256 });
  const signerInfo = new SignerInfo({
    version: 1,
    sid: new SignerIdentifier({
      issuerAndSerialNumber: new IssuerAndSerialNumber({
        issuer: certificate.tbsCertificate.issuer,
        serialNumber: certificate.tbsCertificate.serialNumber,
      }),
    }),
    digestAlgorithm: sha256,
    signedAttrs: attributes.map(({ value }) => value),
    signatureAlgorithm: new AlgorithmIdentifier({
      algorithm: cmsOids.sha256WithRsaEncryption,
      parameters: null,
    }),
    signature: new OctetString(signature),
  });
  const signedData = new SignedData({
    version: 3,
    digestAlgorithms: new DigestAlgorithmIdentifiers([sha256]),
    encapContentInfo: new EncapsulatedContentInfo({
      eContentType: id_ct_tstInfo,
      eContent: new EncapsulatedContent({ single: new OctetString(tstInfoBytes) }),
    }),
    signerInfos: new SignerInfos([signerInfo]),
    ...(request.certReq
      ? {
          certificates: new CertificateSet(
            deps.tsaSigner.certificateChain.map(
              (der) => new CertificateChoices({ certificate: AsnConvert.parse(der, Certificate) }),
            ),
          ),
        }
      : {}),
  });
  const token = new TimeStampToken({
    contentType: cmsOids.signedData,
    content: AsnConvert.serialize(signedData),
  });
  const response = new TimeStampResp({
    status: new PKIStatusInfo({ status: PKIStatus.granted }),
    timeStampToken: token,
  });
  return Buffer.from(AsnConvert.serialize(response));
}
