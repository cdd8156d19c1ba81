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

/** DER → r||s, each half `size` bytes (32 for P-256); refuses what is not an Ecdsa-Sig-Value. */
export function ecdsaDerToRaw(der: Uint8Array, size: number): Buffer {
  const bytes = Buffer.from(der);
  let at = 0;
  const readLength = (): number => {
    const first = bytes[at++]!;
    if (first < 0x80) return first;
    let length = 0;
    for (let count = first & 0x7f; count > 0; count--) length = (length << 8) | bytes[at++]!;
    return length;
  };
  const malformed = () => new RangeError('not a DER ECDSA signature (SEQUENCE of two INTEGERs)');
  if (bytes[at++] !== 0x30) throw malformed();
  const end = readLength() + at;
  if (end !== bytes.length) throw malformed();
  const halves: Buffer[] = [];
  for (let index = 0; index < 2; index++) {
    if (bytes[at++] !== 0x02) throw malformed();
    const length = readLength();
    let value = bytes.subarray(at, at + length);
    at += length;
    while (value.length > size && value[0] === 0) value = value.subarray(1);
    if (value.length > size) throw malformed();
    halves.push(Buffer.concat([Buffer.alloc(size - value.length), value]));
  }
  if (at !== end) throw malformed();
  return Buffer.concat(halves);
}
