import { EngineError } from '../../engineError';
import {
  PdfDict,
  PdfName,
  type PdfObject,
  PdfRaw,
  PdfRef,
  PdfStream,
  PdfString,
  type PdfValue,
} from '../objects';
import { decodeStream } from '../streams';
import type { RevisionState } from './state';

/** Streams larger than this (raw or decoded) are compared byte for byte only. */
const maxComparedStream = 32 * 1024 * 1024;
/** How many values one comparison may visit before it answers "different". */
const compareBudget = 50_000;

/** Keys of a stream dictionary that say how its bytes are stored, not what they are. */
const encodingKeys = new Set(['Length', 'Filter', 'DecodeParms', 'DL']);

/**
 * Whether two versions of an object mean the same: parsed values deeply equal, so dictionary
 * key order, whitespace, number formatting (1.0 and 1), literal or hex strings with the same
 * bytes, and a stream's compression do not count. Two different references are followed (each
 * in its own revision) and compared by what they hold, so a value moved into an object of its
 * own is still the same value. Unsure (a budget spent, a stream that cannot be decoded): not
 * the same.
 */
export function sameObject(
  a: PdfObject | undefined,
  b: PdfObject | undefined,
  left: RevisionState,
  right: RevisionState,
): boolean {
  const comparison = new Comparison(left, right);
  try {
    return comparison.objects(a, b, 0);
  } catch (error) {
    if (error instanceof EngineError) return false;
    throw error;
  }
}

class Comparison {
  private budget = compareBudget;
  /** Pairs of references being compared: met again, they are assumed equal (cycles). */
  private readonly pairs = new Set<string>();

  constructor(
    private readonly left: RevisionState,
    private readonly right: RevisionState,
  ) {}

  objects(a: PdfObject | undefined, b: PdfObject | undefined, depth: number): boolean {
    if (--this.budget < 0 || depth > 64) return false;
    if (a instanceof PdfStream || b instanceof PdfStream) {
      return a instanceof PdfStream && b instanceof PdfStream && this.streams(a, b, depth);
    }
    if (a === undefined || b === undefined) return a === b;
    return this.values(a as PdfValue, b as PdfValue, depth);
  }

  values(a: PdfValue, b: PdfValue, depth: number): boolean {
    if (--this.budget < 0 || depth > 64) return false;
    if (a instanceof PdfRef && b instanceof PdfRef && a.num === b.num && a.gen === b.gen)
      return true;
    if (a instanceof PdfRef || b instanceof PdfRef) {
      const key = `${a instanceof PdfRef ? a.key : '-'}|${b instanceof PdfRef ? b.key : '-'}`;
      if (this.pairs.has(key)) return true;
      this.pairs.add(key);
      const resolvedA = a instanceof PdfRef ? this.left.get(a) : a;
      const resolvedB = b instanceof PdfRef ? this.right.get(b) : b;
      // A reference to nothing is null (ISO 32000-2 7.3.10).
      return this.objects(resolvedA ?? null, resolvedB ?? null, depth + 1);
    }
    if (a === null || typeof a === 'boolean' || typeof a === 'number') return a === b;
    if (a instanceof PdfName) return b instanceof PdfName && a.name === b.name;
    if (a instanceof PdfString) return b instanceof PdfString && a.bytes.equals(b.bytes);
    if (a instanceof PdfRaw) return b instanceof PdfRaw && a.text === b.text;
    if (Array.isArray(a)) {
      return (
        Array.isArray(b) &&
        a.length === b.length &&
        a.every((item, i) => this.values(item, b[i]!, depth + 1))
      );
    }
    if (!(b instanceof PdfDict)) return false;
    return this.dicts(a, b, depth, new Set());
  }

  private dicts(a: PdfDict, b: PdfDict, depth: number, skip: Set<string>): boolean {
    const keys = (d: PdfDict) =>
      [...d.entries.keys()].filter((k) => !skip.has(k) && d.get(k) !== null);
    const keysA = keys(a);
    const keysB = keys(b);
    if (keysA.length !== keysB.length) return false;
    // A key whose value is null is the same as an absent key.
    return keysA.every((key) => {
      const other = b.get(key);
      return other !== undefined && other !== null && this.values(a.get(key)!, other, depth + 1);
    });
  }

  private streams(a: PdfStream, b: PdfStream, depth: number): boolean {
    if (!this.dicts(a.dict, b.dict, depth, encodingKeys)) return false;
    const sameEncoding =
      this.optional(a.dict.get('Filter'), b.dict.get('Filter'), depth) &&
      this.optional(a.dict.get('DecodeParms'), b.dict.get('DecodeParms'), depth);
    if (sameEncoding && a.dataLength === b.dataLength) {
      if (a.dataLength > maxComparedStream) return this.rawEqual(a, b);
      if (this.rawEqual(a, b)) return true;
    }
    if (a.dataLength > maxComparedStream || b.dataLength > maxComparedStream) return false;
    const decodedA = this.decoded(a, this.left);
    const decodedB = this.decoded(b, this.right);
    return decodedA !== undefined && decodedB !== undefined && decodedA.equals(decodedB);
  }

  private optional(a: PdfValue | undefined, b: PdfValue | undefined, depth: number): boolean {
    if (a === undefined || a === null) return b === undefined || b === null;
    return b !== undefined && b !== null && this.values(a, b, depth + 1);
  }

  private rawEqual(a: PdfStream, b: PdfStream): boolean {
    const chunk = 1024 * 1024;
    for (let at = 0; at < a.dataLength; at += chunk) {
      const end = Math.min(a.dataLength, at + chunk);
      const bytesA = this.left.reader.source.slice(a.dataOffset + at, a.dataOffset + end);
      const bytesB = this.right.reader.source.slice(b.dataOffset + at, b.dataOffset + end);
      if (!bytesA.equals(bytesB)) return false;
    }
    return true;
  }

  private decoded(stream: PdfStream, state: RevisionState): Buffer | undefined {
    try {
      const raw = state.reader.source.slice(
        stream.dataOffset,
        stream.dataOffset + stream.dataLength,
      );
      const data = decodeStream(stream.dict, raw, (value) => state.value(value));
      return data.length > maxComparedStream ? undefined : data;
    } catch (error) {
      if (error instanceof EngineError) return undefined;
      throw error;
    }
  }
}

/**
 * The references a value holds (a stream: its dictionary's), without following any, up to a
 * depth: what an object points at.
 */
export function referencesIn(object: PdfObject | undefined, into: PdfRef[] = []): PdfRef[] {
  const visit = (value: PdfValue | undefined, depth: number) => {
    if (depth > 64 || value === undefined || value === null) return;
    if (value instanceof PdfRef) into.push(value);
    else if (Array.isArray(value)) for (const item of value) visit(item, depth + 1);
    else if (value instanceof PdfDict)
      for (const item of value.entries.values()) visit(item, depth + 1);
  };
  if (object instanceof PdfStream) visit(object.dict, 0);
  else visit(object as PdfValue | undefined, 0);
  return into;
}
