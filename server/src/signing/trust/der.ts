/**
 * A minimal DER reader and writer, for the few places where the exact bytes matter more than a
 * parsed model: CMS signs the signed attributes as they were encoded (re-encoding a parsed value
 * may differ), and the ESS signing-certificate attribute is read from its raw value. Definite
 * lengths only: DER has no other.
 */

export interface Tlv {
  tag: number;
  /** Offset of the tag byte in the buffer. */
  start: number;
  /** Offset of the first content byte. */
  contentStart: number;
  /** Offset just past the last content byte. */
  end: number;
}

export class DerError extends Error {
  override readonly name = 'DerError';
}

/** The element starting at `offset`; throws DerError when it is not well-formed DER. */
export function readTlv(buffer: Uint8Array, offset = 0, limit = buffer.length): Tlv {
  if (offset + 2 > limit) throw new DerError('truncated element');
  const tag = buffer[offset]!;
  // High tag numbers (0x1f) never occur in the structures read here.
  if ((tag & 0x1f) === 0x1f) throw new DerError('unsupported high tag number');
  let length = buffer[offset + 1]!;
  let contentStart = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4) throw new DerError('indefinite or oversized length');
    if (contentStart + count > limit) throw new DerError('truncated length');
    length = 0;
    for (let index = 0; index < count; index += 1) {
      length = length * 256 + buffer[contentStart + index]!;
    }
    contentStart += count;
  }
  const end = contentStart + length;
  if (end > limit) throw new DerError('element runs past its container');
  return { tag, start: offset, contentStart, end };
}

/** The elements inside a constructed element. */
export function childrenOf(buffer: Uint8Array, parent: Tlv): Tlv[] {
  const children: Tlv[] = [];
  let offset = parent.contentStart;
  while (offset < parent.end) {
    const child = readTlv(buffer, offset, parent.end);
    children.push(child);
    offset = child.end;
  }
  return children;
}

export function bytesOf(buffer: Uint8Array, element: Tlv): Buffer {
  return Buffer.from(buffer.subarray(element.start, element.end));
}

export function contentOf(buffer: Uint8Array, element: Tlv): Buffer {
  return Buffer.from(buffer.subarray(element.contentStart, element.end));
}

/** One element from its tag and content. */
export function encodeTlv(tag: number, ...content: Uint8Array[]): Buffer {
  const body = Buffer.concat(content);
  const length = body.length;
  let header: number[];
  if (length < 0x80) header = [tag, length];
  else {
    const bytes: number[] = [];
    for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
    header = [tag, 0x80 | bytes.length, ...bytes];
  }
  return Buffer.concat([Buffer.from(header), body]);
}

export const derTag = {
  integer: 0x02,
  octetString: 0x04,
  objectIdentifier: 0x06,
  sequence: 0x30,
  set: 0x31,
  /** [0] constructed, as CMS uses for signed attributes and explicit tags. */
  context0: 0xa0,
  context4: 0xa4,
} as const;

/** A DER SET OF: its elements in ascending byte order (X.690 11.6). */
export function encodeSetOf(elements: Uint8Array[]): Buffer {
  const sorted = [...elements].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return encodeTlv(derTag.set, ...sorted);
}

/** An INTEGER's content bytes as an unsigned number (the sign byte of DER dropped). */
export function unsignedInteger(bytes: Uint8Array): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start += 1;
  return Buffer.from(bytes.subarray(start));
}
