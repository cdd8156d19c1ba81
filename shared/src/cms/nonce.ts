import crypto from 'node:crypto';

/**
 * A random 63-bit RFC 3161 nonce as the content of a DER INTEGER: the top bit clear (positive)
 * and the next one set, so it needs no leading zero byte and never has a redundant one. A
 * leading 0x00 before a byte below 0x80 is not DER, and strict TSAs (openssl) refuse the request.
 */
export function timestampNonce(): Buffer {
  const bytes = crypto.randomBytes(8);
  bytes[0] = (bytes[0]! & 0x3f) | 0x40;
  return bytes;
}
