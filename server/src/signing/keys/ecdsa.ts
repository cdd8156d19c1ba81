/**
 * ECDSA signature encodings: PKCS#11 tokens and WebCrypto give r||s (IEEE P1363), CMS and X.509
 * want the DER `Ecdsa-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }`.
 */

function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** A non-negative big-endian integer as a minimal DER INTEGER. */
function derInteger(magnitude: Uint8Array): Buffer {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  let body = Buffer.from(magnitude.subarray(start));
  if (body[0]! & 0x80) body = Buffer.concat([Buffer.from([0]), body]);
  return Buffer.concat([Buffer.from([0x02]), derLength(body.length), body]);
}

/** r||s (both halves the curve's size) → DER. */
export function ecdsaRawToDer(raw: Uint8Array): Buffer {
  if (raw.length === 0 || raw.length % 2 !== 0) {
    throw new RangeError(`an r||s ECDSA signature has an even length, got ${raw.length} bytes`);
  }
  const half = raw.length / 2;
  const body = Buffer.concat([derInteger(raw.subarray(0, half)), derInteger(raw.subarray(half))]);
  return Buffer.concat([Buffer.from([0x30]), derLength(body.length), body]);
}
