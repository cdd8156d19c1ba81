import zlib from 'node:zlib';
import { ApiError } from '../../errors/apiError';
import { pdfErrors } from './errors';
import {
  decodeTextString,
  isName,
  PdfDict,
  type PdfObject,
  PdfRef,
  PdfStream,
  PdfString,
  type PdfValue,
} from './objects';
import { BufferSource, type ByteSource, FileSource, lastIndexOf, PdfParser } from './parser';

export type XrefEntry =
  | { kind: 'offset'; offset: number; gen: number }
  | { kind: 'compressed'; stream: number; index: number }
  | { kind: 'free' };

/** One cross-reference section: a classic table (maybe hybrid) or an xref stream. */
export interface XrefSection {
  /** Offset of the `xref` keyword or of the xref stream object. */
  offset: number;
  type: 'table' | 'stream';
  /** A table whose trailer names an xref stream (`/XRefStm`) for compressed objects. */
  hybrid: boolean;
  trailer: PdfDict;
  /** This section's own entries (a hybrid table's include its `/XRefStm` stream's). */
  entries: Map<number, XrefEntry>;
  /** The offset just after the `%%EOF` (and its end-of-line) that closes this section. */
  end: number;
  /** Object number of the xref stream itself, if any. */
  streamObject?: number;
}

export interface SignatureField {
  ref: PdfRef | undefined;
  dict: PdfDict;
  /** Fully qualified field name: the parents' `/T` joined with dots. */
  fullName: string;
  /** The field type, inherited from the parents when the field does not say it. */
  fieldType: string | undefined;
}

const maxObjectStreamCache = 8;
/** Xref and object streams are small; a larger one is a decompression bomb, not a PDF. */
const maxStructuralStream = 256 * 1024 * 1024;

/**
 * Reads a PDF by seeking: the trailer and xref chain first, then only the objects asked for.
 * Refuses, before anything else is done, what the signing layer cannot handle: files that are
 * not PDFs, encrypted PDFs, and PDFs whose cross-reference data does not parse.
 */
export class PdfReader {
  /** Newest section first. */
  readonly sections: XrefSection[] = [];
  readonly xref = new Map<number, XrefEntry>();
  private readonly objectStreams = new Map<
    number,
    { data: Buffer; offsets: number[]; first: number }
  >();

  private constructor(readonly source: ByteSource) {}

  /**
   * Opens `path`, runs `read` on it and closes it. A malformed file can make the parser
   * overflow its stack (deep nesting, an object stream holding itself) or meet a value of an
   * unexpected type: those become 422 PDF_UNREADABLE; I/O errors stay what they are.
   * `upTo` reads the file as it was when its first `upTo` bytes were all of it (an earlier
   * revision, when a revision ends there).
   */
  static read<T>(path: string, read: (reader: PdfReader) => T, options: { upTo?: number } = {}): T {
    const source = FileSource.open(path, options.upTo);
    try {
      const reader = new PdfReader(source);
      reader.load();
      return read(reader);
    } catch (error) {
      if (error instanceof ApiError) throw error;
      if (error instanceof RangeError || error instanceof TypeError) {
        throw pdfErrors.unreadable('malformed structure');
      }
      throw error;
    } finally {
      source.close();
    }
  }

  get size(): number {
    return this.source.length;
  }

  /** The newest trailer (or xref stream dictionary). */
  get trailer(): PdfDict {
    return this.sections[0]!.trailer;
  }

  private load(): void {
    const head = this.source.slice(0, 1024).toString('latin1');
    if (!head.includes('%PDF-')) throw pdfErrors.notAPdf();
    const startxref = lastIndexOf(this.source, 'startxref', this.size, 2048);
    if (startxref < 0) throw pdfErrors.unreadable('no startxref');
    const parser = new PdfParser(this.source, startxref + 'startxref'.length);
    let offset: number | undefined = parser.readInteger();
    const seen = new Set<number>();
    while (offset !== undefined) {
      if (seen.has(offset)) throw pdfErrors.unreadable('the xref chain loops');
      seen.add(offset);
      const section = this.readSection(offset);
      this.sections.push(section);
      for (const [num, entry] of section.entries) {
        if (!this.xref.has(num)) this.xref.set(num, entry);
      }
      const prev = section.trailer.get('Prev');
      offset = typeof prev === 'number' ? prev : undefined;
    }
    if (this.trailer.get('Encrypt') !== undefined) throw pdfErrors.encrypted();
    if (!(this.resolve(this.trailer.get('Root')) instanceof PdfDict)) {
      throw pdfErrors.unreadable('no document catalog');
    }
  }

  private readSection(offset: number): XrefSection {
    const parser = new PdfParser(this.source, offset);
    parser.skipWhitespace();
    if (this.source.slice(parser.pos, parser.pos + 4).toString('latin1') === 'xref') {
      parser.pos += 4;
      const entries = new Map<number, XrefEntry>();
      for (;;) {
        const save = parser.pos;
        const token = parser.nextToken();
        if (token.kind === 'keyword' && token.value === 'trailer') break;
        parser.pos = save;
        const first = parser.readInteger();
        const count = parser.readInteger();
        for (let i = 0; i < count; i++) {
          const entryOffset = parser.readInteger();
          const gen = parser.readInteger();
          const type = parser.nextToken();
          if (type.kind !== 'keyword' || (type.value !== 'n' && type.value !== 'f')) {
            throw pdfErrors.unreadable(`bad xref entry at ${parser.pos}`);
          }
          if (!entries.has(first + i)) {
            entries.set(
              first + i,
              type.value === 'n' ? { kind: 'offset', offset: entryOffset, gen } : { kind: 'free' },
            );
          }
        }
      }
      const trailer = parser.parseValue();
      if (!(trailer instanceof PdfDict)) throw pdfErrors.unreadable('bad trailer');
      const xrefStm = trailer.get('XRefStm');
      if (typeof xrefStm === 'number') {
        // Hybrid file: the stream's entries complete the table's. Writers (Word among them)
        // list the compressed objects in the table as free: the stream wins over those.
        const stream = this.readXrefStream(xrefStm);
        for (const [num, entry] of stream.entries) {
          if (entries.get(num)?.kind !== 'offset') entries.set(num, entry);
        }
      }
      return {
        offset,
        type: 'table',
        hybrid: typeof xrefStm === 'number',
        trailer,
        entries,
        end: this.findEof(parser.pos),
      };
    }
    const stream = this.readXrefStream(offset);
    return { offset, type: 'stream', hybrid: false, ...stream };
  }

  private readXrefStream(offset: number): {
    trailer: PdfDict;
    entries: Map<number, XrefEntry>;
    end: number;
    streamObject: number;
  } {
    const parser = new PdfParser(this.source, offset);
    const { ref, object } = parser.parseIndirectObject(undefined, (length) => {
      if (typeof length !== 'number') throw pdfErrors.unreadable('xref stream without /Length');
      return length;
    });
    if (!(object instanceof PdfStream) || !isName(object.dict.get('Type'), 'XRef')) {
      throw pdfErrors.unreadable(`no xref at offset ${offset}`);
    }
    const dict = object.dict;
    const widths = dict.get('W');
    const size = dict.get('Size');
    if (!Array.isArray(widths) || widths.length < 3 || typeof size !== 'number') {
      throw pdfErrors.unreadable('bad xref stream dictionary');
    }
    const w = widths.map((v) => (typeof v === 'number' ? v : 0));
    const index = dict.get('Index');
    const ranges = Array.isArray(index)
      ? index.map((v) => (typeof v === 'number' ? v : 0))
      : [0, size];
    const data = this.streamData(object);
    const rowLength = w[0]! + w[1]! + w[2]!;
    const entries = new Map<number, XrefEntry>();
    let row = 0;
    const field = (start: number, width: number) => {
      let value = 0;
      for (let i = 0; i < width; i++) value = value * 256 + data[start + i]!;
      return value;
    };
    for (let r = 0; r + 1 < ranges.length; r += 2) {
      for (let i = 0; i < ranges[r + 1]!; i++, row++) {
        const at = row * rowLength;
        if (at + rowLength > data.length) throw pdfErrors.unreadable('xref stream too short');
        const type = w[0] === 0 ? 1 : field(at, w[0]!);
        const f2 = field(at + w[0]!, w[1]!);
        const f3 = field(at + w[0]! + w[1]!, w[2]!);
        const num = ranges[r]! + i;
        if (entries.has(num)) continue;
        if (type === 1) entries.set(num, { kind: 'offset', offset: f2, gen: f3 });
        else if (type === 2) entries.set(num, { kind: 'compressed', stream: f2, index: f3 });
        else entries.set(num, { kind: 'free' });
      }
    }
    parser.expectKeyword('endstream');
    return { trailer: dict, entries, end: this.findEof(parser.pos), streamObject: ref.num };
  }

  /** The end of the revision whose xref ends near `from`: just after `%%EOF` and one EOL. */
  private findEof(from: number): number {
    const window = this.source.slice(from, from + 4096);
    const index = window.indexOf('%%EOF', 0, 'latin1');
    if (index < 0) throw pdfErrors.unreadable('no %%EOF after the cross-reference section');
    let end = from + index + 5;
    if (this.source.byteAt(end) === 0x0d) end++;
    if (this.source.byteAt(end) === 0x0a) end++;
    return end;
  }

  /** The decoded bytes of a stream (FlateDecode with PNG predictors, or unfiltered). */
  streamData(stream: PdfStream): Buffer {
    const raw = this.source.slice(stream.dataOffset, stream.dataOffset + stream.dataLength);
    return decodeStream(stream.dict, raw, (v) => this.resolveValue(v));
  }

  resolve(value: PdfValue | undefined): PdfObject | undefined {
    return value instanceof PdfRef ? this.getObject(value) : value;
  }

  /** Like `resolve`, for places where a stream is not acceptable. */
  resolveValue(value: PdfValue | undefined): PdfValue | undefined {
    const object = this.resolve(value);
    return object instanceof PdfStream ? undefined : (object as PdfValue | undefined);
  }

  resolveDict(value: PdfValue | undefined): PdfDict | undefined {
    const object = this.resolve(value);
    return object instanceof PdfDict ? object : undefined;
  }

  getObject(ref: PdfRef, xref: Map<number, XrefEntry> = this.xref): PdfObject | undefined {
    const entry = xref.get(ref.num);
    if (!entry || entry.kind === 'free') return undefined;
    if (entry.kind === 'compressed') return this.compressedObject(entry.stream, entry.index);
    if (entry.gen !== ref.gen) return undefined;
    const parser = new PdfParser(this.source, entry.offset);
    return parser.parseIndirectObject(ref, (length) => {
      const resolved = this.resolveValue(length);
      if (typeof resolved !== 'number')
        throw pdfErrors.unreadable(`stream ${ref.key} has no /Length`);
      return resolved;
    }).object;
  }

  private compressedObject(streamNum: number, index: number): PdfObject | undefined {
    let objectStream = this.objectStreams.get(streamNum);
    if (!objectStream) {
      const stream = this.getObject(new PdfRef(streamNum, 0));
      if (!(stream instanceof PdfStream) || !isName(stream.dict.get('Type'), 'ObjStm')) {
        throw pdfErrors.unreadable(`object stream ${streamNum} not found`);
      }
      const n = stream.dict.get('N');
      const first = stream.dict.get('First');
      if (typeof n !== 'number' || typeof first !== 'number') {
        throw pdfErrors.unreadable(`bad object stream ${streamNum}`);
      }
      const data = this.streamData(stream);
      const header = new PdfParser(new BufferSource(data), 0);
      const offsets: number[] = [];
      for (let i = 0; i < n; i++) {
        header.readInteger();
        offsets.push(header.readInteger());
      }
      objectStream = { data, offsets, first };
      this.objectStreams.set(streamNum, objectStream);
      if (this.objectStreams.size > maxObjectStreamCache) {
        const oldest = this.objectStreams.keys().next().value;
        if (oldest !== undefined) this.objectStreams.delete(oldest);
      }
    }
    const offset = objectStream.offsets[index];
    if (offset === undefined) return undefined;
    return new PdfParser(
      new BufferSource(objectStream.data),
      objectStream.first + offset,
    ).parseValue();
  }

  catalogRef(): PdfRef {
    const root = this.trailer.get('Root');
    if (!(root instanceof PdfRef)) throw pdfErrors.unreadable('the trailer has no /Root reference');
    return root;
  }

  catalog(): PdfDict {
    const catalog = this.resolveDict(this.trailer.get('Root'));
    if (!catalog) throw pdfErrors.unreadable('no document catalog');
    return catalog;
  }

  /** The reference of page `index` (0-based), descending the page tree by `/Count`. */
  pageRef(index: number): { ref: PdfRef; count: number } {
    const pagesRef = this.catalog().get('Pages');
    const root = this.resolveDict(pagesRef);
    if (!root || !(pagesRef instanceof PdfRef)) throw pdfErrors.unreadable('no page tree');
    const total = this.resolveValue(root.get('Count'));
    const count = typeof total === 'number' ? total : 0;
    if (index < 0 || index >= count) throw pdfErrors.pageNotFound(index + 1, count);
    let node = root;
    let remaining = index;
    for (let depth = 0; depth < 64; depth++) {
      const kids = this.resolveValue(node.get('Kids'));
      if (!Array.isArray(kids)) break;
      let descended = false;
      for (const kid of kids) {
        const kidDict = this.resolveDict(kid);
        if (!kidDict || !(kid instanceof PdfRef)) continue;
        if (isName(kidDict.get('Type'), 'Pages')) {
          const kidCount = this.resolveValue(kidDict.get('Count'));
          const n = typeof kidCount === 'number' ? kidCount : 0;
          if (remaining < n) {
            node = kidDict;
            descended = true;
            break;
          }
          remaining -= n;
        } else {
          if (remaining === 0) return { ref: kid, count };
          remaining--;
        }
      }
      if (!descended) break;
    }
    throw pdfErrors.unreadable(`page ${index + 1} not found in the page tree`);
  }

  /**
   * The DocMDP permission (1 no change, 2 form filling and signing, 3 also annotations) of a
   * certification signature's `/Reference`, or undefined for an approval signature.
   */
  docMdpPermission(signature: PdfDict): 1 | 2 | 3 | undefined {
    const references = this.resolveValue(signature.get('Reference'));
    if (!Array.isArray(references)) return undefined;
    for (const reference of references) {
      const ref = this.resolveDict(reference);
      if (!ref || !isName(ref.get('TransformMethod'), 'DocMDP')) continue;
      const params = this.resolveDict(ref.get('TransformParams'));
      const p = params ? this.resolveValue(params.get('P')) : undefined;
      // /P defaults to 2 when absent.
      return p === 1 || p === 3 ? p : 2;
    }
    return undefined;
  }

  /** Every terminal field of the AcroForm (widgets merged with fields included). */
  fields(): SignatureField[] {
    const acroForm = this.resolveDict(this.catalog().get('AcroForm'));
    const top = acroForm ? this.resolveValue(acroForm.get('Fields')) : undefined;
    const result: SignatureField[] = [];
    const seen = new Set<string>();
    const walk = (
      value: PdfValue,
      parentName: string,
      parentType: string | undefined,
      depth: number,
    ) => {
      if (depth > 32) return;
      if (value instanceof PdfRef) {
        if (seen.has(value.key)) return;
        seen.add(value.key);
      }
      const field = this.resolveDict(value);
      if (!field) return;
      const t = field.get('T');
      const partial = t instanceof PdfString ? decodeTextString(t) : undefined;
      const fullName =
        partial === undefined ? parentName : parentName ? `${parentName}.${partial}` : partial;
      const ft = field.get('FT');
      const fieldType = isName(ft) ? ft.name : parentType;
      const kids = this.resolveValue(field.get('Kids'));
      const fieldKids = Array.isArray(kids)
        ? kids.filter((kid) => this.resolveDict(kid)?.get('T') !== undefined)
        : [];
      if (fieldKids.length > 0) {
        for (const kid of fieldKids) walk(kid, fullName, fieldType, depth + 1);
        return;
      }
      result.push({
        ref: value instanceof PdfRef ? value : undefined,
        dict: field,
        fullName,
        fieldType,
      });
    };
    if (Array.isArray(top)) for (const field of top) walk(field, '', undefined, 0);
    return result;
  }
}

function pngUnpredict(
  data: Buffer,
  columns: number,
  colors: number,
  bitsPerComponent: number,
): Buffer {
  const bpp = Math.max(1, Math.ceil((colors * bitsPerComponent) / 8));
  const rowLength = Math.ceil((columns * colors * bitsPerComponent) / 8);
  const rows = Math.floor(data.length / (rowLength + 1));
  const out = Buffer.alloc(rows * rowLength);
  for (let r = 0; r < rows; r++) {
    const filter = data[r * (rowLength + 1)]!;
    const src = r * (rowLength + 1) + 1;
    const dst = r * rowLength;
    for (let i = 0; i < rowLength; i++) {
      const raw = data[src + i]!;
      const left = i >= bpp ? out[dst + i - bpp]! : 0;
      const up = r > 0 ? out[dst - rowLength + i]! : 0;
      const upLeft = r > 0 && i >= bpp ? out[dst - rowLength + i - bpp]! : 0;
      let value: number;
      switch (filter) {
        case 0:
          value = raw;
          break;
        case 1:
          value = raw + left;
          break;
        case 2:
          value = raw + up;
          break;
        case 3:
          value = raw + ((left + up) >> 1);
          break;
        case 4: {
          const p = left + up - upLeft;
          const pa = Math.abs(p - left);
          const pb = Math.abs(p - up);
          const pc = Math.abs(p - upLeft);
          value = raw + (pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft);
          break;
        }
        default:
          throw pdfErrors.unreadable(`unknown PNG predictor ${filter}`);
      }
      out[dst + i] = value & 0xff;
    }
  }
  return out;
}

/** Decodes a stream's bytes: FlateDecode (with PNG predictors) or no filter, nothing else. */
export function decodeStream(
  dict: PdfDict,
  raw: Buffer,
  resolve: (value: PdfValue | undefined) => PdfValue | undefined,
): Buffer {
  const filter = resolve(dict.get('Filter'));
  const filters = Array.isArray(filter)
    ? filter
    : filter === undefined || filter === null
      ? []
      : [filter];
  const parms = resolve(dict.get('DecodeParms'));
  let data = raw;
  filters.forEach((f, i) => {
    if (!isName(f, 'FlateDecode')) {
      throw pdfErrors.unreadable(`unsupported filter in a structural stream`);
    }
    try {
      data = zlib.inflateSync(data, {
        finishFlush: zlib.constants.Z_SYNC_FLUSH,
        maxOutputLength: maxStructuralStream,
      });
    } catch {
      throw pdfErrors.unreadable('a compressed stream is corrupt');
    }
    const p = Array.isArray(parms) ? resolve(parms[i]) : parms;
    if (p instanceof PdfDict) {
      const predictor = p.get('Predictor');
      const num = (key: string, fallback: number) => {
        const v = p.get(key);
        return typeof v === 'number' ? v : fallback;
      };
      if (typeof predictor === 'number' && predictor >= 10) {
        data = pngUnpredict(data, num('Columns', 1), num('Colors', 1), num('BitsPerComponent', 8));
      } else if (typeof predictor === 'number' && predictor > 1) {
        throw pdfErrors.unreadable(`unsupported predictor ${predictor}`);
      }
    }
  });
  return data;
}
