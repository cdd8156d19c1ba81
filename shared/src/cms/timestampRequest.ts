import crypto from 'node:crypto';
import {
  derElement,
  derNull,
  derObjectIdentifier,
  derOctetString,
  derSequence,
  derUnsignedInteger,
} from './der';
import { cmsOids } from './oids';

/**
 * A random 63-bit RFC 3161 nonce (big-endian): the top bit clear and the next one set, so its
 * INTEGER encoding is always 8 bytes with no sign byte, whoever encodes it.
 */
export function timestampNonce(): Buffer {
  const bytes = crypto.randomBytes(8);
  bytes[0] = (bytes[0]! & 0x3f) | 0x40;
  return bytes;
}

const derTrue = derElement(0x01, Uint8Array.of(0xff));

/**
 * The DER TimeStampReq (RFC 3161 §2.4.1) the server and the agent send: version 1, a SHA-256
 * messageImprint, our nonce (a minimal INTEGER: strict TSAs refuse a redundant leading zero)
 * and certReq TRUE so the token carries the TSA certificate to verify it with.
 */
export function timestampRequest(imprint: Uint8Array, nonce: Uint8Array): Buffer {
  if (imprint.length !== 32)
    throw new TypeError('timestampRequest: the imprint is a SHA-256 digest');
  const algorithm = derSequence(derObjectIdentifier(cmsOids.sha256), derNull);
  return Buffer.from(
    derSequence(
      derUnsignedInteger(Uint8Array.of(1)),
      derSequence(algorithm, derOctetString(imprint)),
      derUnsignedInteger(nonce),
      derTrue,
    ),
  );
}
