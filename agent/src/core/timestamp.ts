import crypto from 'node:crypto';
import {
  cmsOids,
  type DecodedTimestampToken,
  decodeTimestampToken,
  derObjectIdentifier,
  derTag,
  derUnsignedMagnitude,
  derValue,
  hashOf,
  readDerElement,
  readTimestampResponse,
  signatureHash,
  type TimestampResponse,
  TimestampTokenError,
  timestampNonce,
  timestampRequest,
  timestampSignerCertificate,
} from '@esign/shared/cms';
import { AgentFailure } from './errors';
import { httpExchange } from './httpClient';

const TSA_TIMEOUT_MS = 15_000;
const TSA_MAX_BYTES = 256 * 1024;

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
  let response: TimestampResponse;
  try {
    response = readTimestampResponse(reply);
  } catch (error) {
    if (error instanceof TimestampTokenError)
      failed(`the TSA reply is not a TimeStampResp (${error.message})`);
    throw error;
  }
  if (!response.granted) {
    const failure = response.failInfo.join(', ');
    const text = response.statusText.join('; ');
    failed(
      `the TSA refused: status ${response.statusName}${failure ? ` (${failure})` : ''}${text ? `: ${text}` : ''}`,
    );
  }
  if (response.token === undefined) failed('the TSA granted without a token');
  // A copy: the token outlives the reply.
  return Buffer.from(response.token);
}

/** The one value of a signed attribute (DER), or undefined. */
function attributeValue(token: DecodedTimestampToken, type: string): Buffer | undefined {
  const found = token.signer.attributes.filter((attribute) => attribute.type === type);
  return found.length === 1 && found[0]!.values.length === 1
    ? Buffer.from(found[0]!.values[0]!)
    : undefined;
}

/** Checks a TimeStampToken against our imprint and nonce (unsigned magnitude); throws TIMESTAMP_FAILED. */
export function checkTimestampToken(token: Buffer, imprint: Buffer, nonce: Uint8Array): void {
  let decoded: DecodedTimestampToken;
  try {
    decoded = decodeTimestampToken(token);
  } catch (error) {
    if (error instanceof TimestampTokenError) failed(`the token does not parse (${error.message})`);
    throw error;
  }
  const { tstInfo, signer } = decoded;
  if (
    tstInfo.imprintAlgorithm !== cmsOids.sha256 ||
    !Buffer.from(tstInfo.hashedMessage).equals(imprint)
  ) {
    failed('the token timestamps other data');
  }
  const tokenNonce = tstInfo.nonce ? derUnsignedMagnitude(tstInfo.nonce) : undefined;
  if (!tokenNonce || !Buffer.from(tokenNonce).equals(Buffer.from(nonce))) {
    failed('the token does not carry our nonce (a replayed answer?)');
  }
  const digest = hashOf(signer.digestAlgorithm);
  const verifyHash =
    digest && digest !== 'sha1' ? signatureHash(signer.signatureAlgorithm, digest) : undefined;
  if (!digest || !verifyHash) failed('the token uses an algorithm the agent does not check');

  const contentType = attributeValue(decoded, cmsOids.contentType);
  if (!contentType?.equals(Buffer.from(derObjectIdentifierOfTstInfo))) {
    failed('the token content-type attribute is not TSTInfo');
  }
  const messageDigest = attributeValue(decoded, cmsOids.messageDigest);
  if (
    messageDigest?.[0] !== derTag.octetString ||
    !Buffer.from(derValue(messageDigest, readDerElement(messageDigest))).equals(
      crypto.createHash(digest).update(tstInfo.bytes).digest(),
    )
  ) {
    failed('the token message-digest does not match its TSTInfo');
  }

  const tsaDer = timestampSignerCertificate(decoded);
  let tsa: crypto.X509Certificate | undefined;
  try {
    tsa = tsaDer ? new crypto.X509Certificate(tsaDer) : undefined;
  } catch {
    tsa = undefined;
  }
  if (!tsa) failed('the token does not carry the TSA certificate');
  if (!(tsa.keyUsage ?? []).includes(cmsOids.timeStampingKeyUsage)) {
    failed('the TSA certificate lacks the timeStamping extended key usage');
  }
  if (!signer.signedAttributes) failed('the token has no signed attributes');
  let valid = false;
  try {
    valid = crypto.verify(verifyHash, signer.signedAttributes, tsa.publicKey, signer.signature);
  } catch {
    valid = false;
  }
  if (!valid) failed('the TSA signature on the token does not verify');
}

/** DER of OBJECT IDENTIFIER id-ct-TSTInfo. */
const derObjectIdentifierOfTstInfo = derObjectIdentifier(cmsOids.tstInfo);
