import crypto from 'node:crypto';
import {
  DerError,
  derBytes,
  derChildren,
  derTag,
  derUnsignedMagnitude,
  derValue,
  firstSignerSignedAttributes,
  hashOf,
  oid,
  readDerElement,
  signatureHash,
  timestampNonce,
  timestampRequest,
} from '@esign/shared/cms';
import { ContentInfo, SignedData } from '@peculiar/asn1-cms';
import { AsnConvert } from '@peculiar/asn1-schema';
import { id_ct_tstInfo, PKIStatus, TimeStampResp, TSTInfo } from '@peculiar/asn1-tsp';
import {
  type Certificate,
  id_ce_subjectKeyIdentifier,
  SubjectKeyIdentifier,
} from '@peculiar/asn1-x509';
import { AgentFailure } from './errors';
import { httpExchange } from './httpClient';

const TSA_TIMEOUT_MS = 15_000;
const TSA_MAX_BYTES = 256 * 1024;
const TIMESTAMPING_EKU = '1.3.6.1.5.5.7.3.8';

function failed(message: string): never {
  throw new AgentFailure('TIMESTAMP_FAILED', message);
}

/**
 * An RFC 3161 timestamp over `imprint` (SHA-256, 32 bytes) from `tsaUrl`, checked before it is
 * returned: granted, our imprint and nonce, the TSA's signature over its signed attributes by
 * the certificate the token carries, that certificate's timeStamping EKU. Trust in the TSA is
 * the server's decision (it has the anchors); the agent makes sure the token is for this
 * signature and intact, so a bad TSA fails here with a message rather than at the server.
 */
export async function requestTimestamp(tsaUrl: string, imprint: Buffer): Promise<Buffer> {
  const nonce = timestampNonce();
  let answer: Awaited<ReturnType<typeof httpExchange>>;
  try {
    answer = await httpExchange(tsaUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/timestamp-query' },
      body: new Uint8Array(timestampRequest(imprint, nonce)),
      timeoutMs: TSA_TIMEOUT_MS,
      maxBytes: TSA_MAX_BYTES,
    });
  } catch (error) {
    failed(`${tsaUrl}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (answer.status !== 200) failed(`${tsaUrl} answered HTTP ${answer.status}`);
  const token = grantedToken(answer.body);
  checkTimestampToken(token, imprint, derUnsignedMagnitude(nonce));
  return token;
}

/** The token of a granted TimeStampResp, exactly as the TSA encoded it. */
function grantedToken(reply: Buffer): Buffer {
  let response: TimeStampResp;
  let token: Buffer | undefined;
  try {
    response = AsnConvert.parse(reply, TimeStampResp);
    const tokenElement = derChildren(reply, readDerElement(reply))[1];
    token = tokenElement ? Buffer.from(derBytes(reply, tokenElement)) : undefined;
  } catch (error) {
    failed(`the TSA reply is not a DER TimeStampResp (${(error as Error).message})`);
  }
  const { status } = response.status;
  if (status !== PKIStatus.granted && status !== PKIStatus.grantedWithMods) {
    failed(`the TSA refused: status ${PKIStatus[status] ?? status}`);
  }
  if (token === undefined) failed('the TSA granted without a token');
  return token;
}

/** The one value of a signed attribute (DER), or undefined. */
function attributeValue(signedData: SignedData, type: string): Buffer | undefined {
  const found = (signedData.signerInfos[0]?.signedAttrs ?? []).filter(
    (attribute) => attribute.attrType === type,
  );
  return found.length === 1 && found[0]!.attrValues.length === 1
    ? Buffer.from(found[0]!.attrValues[0]!)
    : undefined;
}

/** Checks a TimeStampToken against our imprint and nonce (unsigned magnitude); throws TIMESTAMP_FAILED. */
export function checkTimestampToken(token: Buffer, imprint: Buffer, nonce: Uint8Array): void {
  let signedData: SignedData;
  let signedDataDer: Buffer;
  let tstInfo: TSTInfo;
  let tstInfoBytes: Buffer;
  try {
    const contentInfo = AsnConvert.parse(token, ContentInfo);
    if (contentInfo.contentType !== oid.signedData) failed('the token is not SignedData');
    signedDataDer = Buffer.from(contentInfo.content);
    signedData = AsnConvert.parse(signedDataDer, SignedData);
    const eContent = signedData.encapContentInfo.eContent?.single;
    if (signedData.encapContentInfo.eContentType !== id_ct_tstInfo || eContent === undefined) {
      failed('the token holds no TSTInfo');
    }
    tstInfoBytes = Buffer.from(eContent.buffer);
    tstInfo = AsnConvert.parse(tstInfoBytes, TSTInfo);
  } catch (error) {
    if (error instanceof AgentFailure) throw error;
    failed(`the token does not parse (${(error as Error).message})`);
  }
  const { messageImprint } = tstInfo;
  if (
    messageImprint.hashAlgorithm.algorithm !== oid.sha256 ||
    !Buffer.from(messageImprint.hashedMessage.buffer).equals(imprint)
  ) {
    failed('the token timestamps other data');
  }
  const tokenNonce = tstInfo.nonce
    ? derUnsignedMagnitude(new Uint8Array(tstInfo.nonce))
    : undefined;
  if (!tokenNonce || !Buffer.from(tokenNonce).equals(Buffer.from(nonce))) {
    failed('the token does not carry our nonce (a replayed answer?)');
  }
  if (signedData.signerInfos.length !== 1) failed('the token has not exactly one signer');
  const signerInfo = signedData.signerInfos[0]!;
  const digest = hashOf(signerInfo.digestAlgorithm.algorithm);
  const verifyHash =
    digest && digest !== 'sha1'
      ? signatureHash(signerInfo.signatureAlgorithm.algorithm, digest)
      : undefined;
  if (!digest || !verifyHash) failed('the token uses an algorithm the agent does not check');

  const contentType = attributeValue(signedData, oid.contentType);
  if (!contentType?.equals(Buffer.from(derObjectIdentifierOfTstInfo))) {
    failed('the token content-type attribute is not TSTInfo');
  }
  const messageDigest = attributeValue(signedData, oid.messageDigest);
  if (
    messageDigest?.[0] !== derTag.octetString ||
    !Buffer.from(derValue(messageDigest, readDerElement(messageDigest))).equals(
      crypto.createHash(digest).update(tstInfoBytes).digest(),
    )
  ) {
    failed('the token message-digest does not match its TSTInfo');
  }

  const tsa = tsaCertificate(signedData);
  if (!tsa) failed('the token does not carry the TSA certificate');
  if (!(tsa.keyUsage ?? []).includes(TIMESTAMPING_EKU)) {
    failed('the TSA certificate lacks the timeStamping extended key usage');
  }
  let attributes: Uint8Array | undefined;
  try {
    attributes = firstSignerSignedAttributes(signedDataDer);
  } catch (error) {
    if (error instanceof DerError) failed(`the token is malformed (${error.message})`);
    throw error;
  }
  if (!attributes) failed('the token has no signed attributes');
  let valid = false;
  try {
    valid = crypto.verify(
      verifyHash,
      attributes,
      tsa.publicKey,
      Buffer.from(signerInfo.signature.buffer),
    );
  } catch {
    valid = false;
  }
  if (!valid) failed('the TSA signature on the token does not verify');
}

/** DER of OBJECT IDENTIFIER id-ct-TSTInfo (1.2.840.113549.1.9.16.1.4). */
const derObjectIdentifierOfTstInfo = Uint8Array.from([
  0x06, 0x0b, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x10, 0x01, 0x04,
]);

/** The certificate the SignerInfo names by issuer and serial or by subject key identifier. */
function tsaCertificate(signedData: SignedData): crypto.X509Certificate | undefined {
  const sid = signedData.signerInfos[0]!.sid;
  for (const choice of signedData.certificates ?? []) {
    if (!choice.certificate) continue;
    const der = Buffer.from(AsnConvert.serialize(choice.certificate));
    const certificate: Certificate = choice.certificate;
    if (sid.issuerAndSerialNumber) {
      const sameIssuer = Buffer.from(
        AsnConvert.serialize(certificate.tbsCertificate.issuer),
      ).equals(Buffer.from(AsnConvert.serialize(sid.issuerAndSerialNumber.issuer)));
      const sameSerial = Buffer.from(certificate.tbsCertificate.serialNumber).equals(
        Buffer.from(sid.issuerAndSerialNumber.serialNumber),
      );
      if (sameIssuer && sameSerial) return new crypto.X509Certificate(der);
    } else if (sid.subjectKeyIdentifier) {
      const extension = certificate.tbsCertificate.extensions?.find(
        (entry) => entry.extnID === id_ce_subjectKeyIdentifier,
      );
      const keyId = extension
        ? Buffer.from(AsnConvert.parse(extension.extnValue, SubjectKeyIdentifier).buffer)
        : undefined;
      if (keyId?.equals(Buffer.from(sid.subjectKeyIdentifier.buffer))) {
        return new crypto.X509Certificate(der);
      }
    }
  }
  return undefined;
}
