import { AsnObjectIdentifierConverter } from '@peculiar/asn1-schema';

/**
 * DER framing (tag, length, value) over byte slices. The signature engine embeds bytes it did
 * not make (the certificate's issuer name, certificates, the signed attributes, a timestamp
 * token) and they must stay exactly as given: a schema library re-encodes what it parsed, so
 * the framing is done here and @peculiar only parses and validates the structures.
 */

export const derTag = {
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  null: 0x05,
  objectIdentifier: 0x06,
  sequence: 0x30,
  set: 0x31,
} as const;

/** Context-specific constructed tag `[n]` (IMPLICIT of a constructed type or EXPLICIT). */
export function contextTag(n: number): number {
  return 0xa0 | n;
}

/** One element read from a DER buffer: `start` is its tag byte, `valueStart..end` its value. */
export interface DerElement {
  tag: number;
  start: number;
  valueStart: number;
  end: number;
}

export class DerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DerError';
  }
}

/** Reads the element at `offset` (single-byte tags, definite minimal lengths only: DER). */
export function readDerElement(bytes: Uint8Array, offset = 0, limit = bytes.length): DerElement {
  if (offset + 2 > limit) throw new DerError(`truncated element at byte ${offset}`);
  const tag = bytes[offset] as number;
  if ((tag & 0x1f) === 0x1f) throw new DerError(`multi-byte tag at byte ${offset}`);
  const first = bytes[offset + 1] as number;
  let length = first;
  let valueStart = offset + 2;
  if (first & 0x80) {
    const count = first & 0x7f;
    if (count === 0) throw new DerError(`indefinite length at byte ${offset} (BER, not DER)`);
    if (count > 4) throw new DerError(`length of ${count} bytes at byte ${offset}`);
    if (valueStart + count > limit) throw new DerError(`truncated length at byte ${offset}`);
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + (bytes[valueStart + i] as number);
    if (length < 0x80 || (bytes[valueStart] as number) === 0) {
      throw new DerError(`non-minimal length at byte ${offset} (BER, not DER)`);
    }
    valueStart += count;
  }
  const end = valueStart + length;
  if (end > limit) throw new DerError(`element at byte ${offset} runs past its container`);
  return { tag, start: offset, valueStart, end };
}

/** Reads a buffer that must hold exactly one element, nothing after it. */
export function readDerWhole(bytes: Uint8Array): DerElement {
  const element = readDerElement(bytes);
  if (element.end !== bytes.length) {
    throw new DerError(`${bytes.length - element.end} bytes after the element`);
  }
  return element;
}

/** The elements inside a constructed element, which must fill it exactly. */
export function derChildren(bytes: Uint8Array, parent: DerElement): DerElement[] {
  const children: DerElement[] = [];
  let offset = parent.valueStart;
  while (offset < parent.end) {
    const child = readDerElement(bytes, offset, parent.end);
    children.push(child);
    offset = child.end;
  }
  return children;
}

export function derBytes(bytes: Uint8Array, element: DerElement): Uint8Array {
  return bytes.subarray(element.start, element.end);
}

export function derValue(bytes: Uint8Array, element: DerElement): Uint8Array {
  return bytes.subarray(element.valueStart, element.end);
}

function lengthBytes(length: number): number[] {
  if (length < 0x80) return [length];
  const out: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) out.unshift(rest % 256);
  return [0x80 | out.length, ...out];
}

/** One element from its tag and its contents, concatenated. */
export function derElement(tag: number, ...contents: Uint8Array[]): Uint8Array {
  const length = contents.reduce((sum, part) => sum + part.length, 0);
  const header = [tag, ...lengthBytes(length)];
  const out = new Uint8Array(header.length + length);
  out.set(header, 0);
  let offset = header.length;
  for (const part of contents) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

export function derSequence(...contents: Uint8Array[]): Uint8Array {
  return derElement(derTag.sequence, ...contents);
}

/** X.690 11.6: SET OF members in ascending order of their encodings, shorter ones padded with zeros. */
export function compareDerEncodings(a: Uint8Array, b: Uint8Array): number {
  const length = Math.max(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const difference = (a[i] ?? 0) - (b[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return a.length - b.length;
}

/** A DER `SET OF` of already-encoded members, sorted as DER requires. */
export function derSetOf(members: Uint8Array[]): Uint8Array {
  return derElement(derTag.set, ...[...members].sort(compareDerEncodings));
}

export function derObjectIdentifier(oid: string): Uint8Array {
  return new Uint8Array(AsnObjectIdentifierConverter.toASN(oid).toBER(false));
}

export function derOctetString(value: Uint8Array): Uint8Array {
  return derElement(derTag.octetString, value);
}

export const derNull: Uint8Array = Uint8Array.of(derTag.null, 0);

/** A non-negative INTEGER from its big-endian magnitude (leading zeros dropped, one added if the sign bit is set). */
export function derUnsignedInteger(magnitude: Uint8Array): Uint8Array {
  const trimmed = derUnsignedMagnitude(magnitude);
  const needsZero = trimmed.length === 0 || ((trimmed[0] as number) & 0x80) !== 0;
  return derElement(derTag.integer, needsZero ? Uint8Array.of(0) : new Uint8Array(), trimmed);
}

/**
 * The big-endian magnitude of a non-negative INTEGER's value (or of any big-endian number):
 * leading zero bytes, the DER sign byte among them, dropped; at least one byte is kept.
 */
export function derUnsignedMagnitude(value: Uint8Array): Uint8Array {
  let start = 0;
  while (start < value.length - 1 && value[start] === 0) start++;
  return value.subarray(start);
}

/** The dotted form of an OBJECT IDENTIFIER element. */
export function readDerObjectIdentifier(bytes: Uint8Array, element: DerElement): string {
  if (element.tag !== derTag.objectIdentifier) throw new DerError('expected an OBJECT IDENTIFIER');
  const value = derValue(bytes, element);
  const arcs: number[] = [];
  let arc = 0;
  for (const [index, byte] of value.entries()) {
    if (arc === 0 && byte === 0x80) throw new DerError('non-minimal OBJECT IDENTIFIER arc');
    arc = arc * 128 + (byte & 0x7f);
    if (byte & 0x80) {
      if (index === value.length - 1) throw new DerError('truncated OBJECT IDENTIFIER');
      continue;
    }
    if (arcs.length === 0)
      arcs.push(arc < 80 ? Math.floor(arc / 40) : 2, arc < 80 ? arc % 40 : arc - 80);
    else arcs.push(arc);
    arc = 0;
  }
  if (arcs.length === 0) throw new DerError('empty OBJECT IDENTIFIER');
  return arcs.join('.');
}
