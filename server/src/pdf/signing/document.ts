import zlib from 'node:zlib';
import { EngineError } from '../engineError';
import { currentPdfLimits, maxObjectNumber, PdfBudget } from './budget';
import { pdfErrors } from './errors';
import { type SignatureField, terminalFields } from './fields';
import { isName, PdfDict, type PdfObject, PdfRef, PdfStream, type PdfValue } from './objects';
import { BufferSource, type ByteSource, FileSource, lastIndexOf, PdfParser } from './parser';

export type { SignatureField } from './fields';

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

/** One object for every free entry: a table of a million free entries allocates nothing more. */
const freeEntry: XrefEntry = Object.freeze({ kind: 'free' });

const maxObjectStreamCache = 8;
/** Decoded object streams kept at once, in bytes (each is at most the structural stream limit). */
const maxObjectStreamCacheBytes = 32 * 1024 * 1024;
/** References followed one inside another (a /Length, an object stream) before giving up. */
const maxReferenceDepth = 32;
/** The shortest classic cross-reference entry: ten digits, five digits, a letter, 2 separators. */
const minXrefTableEntry = 18;

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
  private objectStreamBytes = 0;
  /** Object numbers being read, innermost last: a reference back to one of them is a loop. */
  private readonly reading = new Set<number>();

  private constructor(
    readonly source: ByteSource,
    readonly budget: PdfBudget,
  ) {}

  /**
   * Opens `path`, runs `read` on it and closes it, within the thread's limits
   * (`currentPdfLimits`): what passes one is 422 PDF_TOO_COMPLEX. A malformed file that still
   * makes the parser overflow its stack or meet a value of an unexpected type becomes 422
   * PDF_UNREADABLE; I/O errors stay what they are. `upTo` reads the file as it was when its
   * first `upTo` bytes were all of it (an earlier revision, when a revision ends there).
   */
  static read<T>(path: string, read: (reader: PdfReader) => T, options: { upTo?: number } = {}): T {
    const source = FileSource.open(path, options.upTo);
    try {
      const reader = new PdfReader(source, new PdfBudget(currentPdfLimits()));
      reader.load();
      return read(reader);
    } catch (error) {
      if (error instanceof EngineError) throw error;
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
    const parser = this.parserAt(startxref + 'startxref'.length);
    let offset: number | undefined = parser.readInteger();
    const seen = new Set<number>();
    while (offset !== undefined) {
      if (seen.has(offset)) throw pdfErrors.unreadable('the xref chain loops');
      seen.add(offset);
      this.budget.xrefSection();
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

  private parserAt(offset: number): PdfParser {
    return new PdfParser(this.source, offset, this.budget);
  }

  private readSection(offset: number): XrefSection {
    const parser = this.parserAt(offset);
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
        if (first < 0 || count < 0 || first + count > maxObjectNumber + 1) {
          throw pdfErrors.unreadable(`bad xref subsection ${first} ${count}`);
        }
        if (count * minXrefTableEntry > this.size - parser.pos) {
          throw pdfErrors.unreadable(`xref subsection of ${count} entries longer than the file`);
        }
        this.budget.xrefEntriesRead(count);
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
              type.value === 'n' ? { kind: 'offset', offset: entryOffset, gen } : freeEntry,
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
    const parser = this.parserAt(offset);
    const { ref, object } = parser.parseIndirectObject(undefined, (length) => {
      if (typeof length !== 'number') throw pdfErrors.unreadable('xref stream without /Length');
      return length;
    });
    if (!(object instanceof PdfStream) || !isName(object.dict.get('Type'), 'XRef')) {
      throw pdfErrors.unreadable(`no xref at offset ${offset}`);
    }
    const dict = object.dict;
    const { w, ranges } = xrefStreamLayout(dict);
    const data = this.streamData(object, true);
    const rowLength = w[0]! + w[1]! + w[2]!;
    let rows = 0;
    for (let r = 1; r < ranges.length; r += 2) rows += ranges[r]!;
    // Every row is in the data: a stream cannot list more entries than it holds.
    if (rows * rowLength > data.length) throw pdfErrors.unreadable('xref stream too short');
    this.budget.xrefEntriesRead(rows);
    const entries = new Map<number, XrefEntry>();
    let row = 0;
    const field = (start: number, width: number) => {
      let value = 0;
      for (let i = 0; i < width; i++) value = value * 256 + data[start + i]!;
      return value;
    };
    for (let r = 0; r + 1 < ranges.length; r += 2) {
      for (let i = 0; i < ranges[r + 1]!; i++, row++) {
        this.budget.step();
        const at = row * rowLength;
        if (at + rowLength > data.length) throw pdfErrors.unreadable('xref stream too short');
        const type = w[0] === 0 ? 1 : field(at, w[0]!);
        const f2 = field(at + w[0]!, w[1]!);
        const f3 = field(at + w[0]! + w[1]!, w[2]!);
        const num = ranges[r]! + i;
        if (entries.has(num)) continue;
        if (type === 1) entries.set(num, { kind: 'offset', offset: f2, gen: f3 });
        else if (type === 2) entries.set(num, { kind: 'compressed', stream: f2, index: f3 });
        else entries.set(num, freeEntry);
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

  /**
   * The decoded bytes of a stream (FlateDecode with PNG predictors, or unfiltered), within the
   * read's limits: `structural` for cross-reference and object streams, which are small.
   */
  streamData(stream: PdfStream, structural = false): Buffer {
    const raw = this.source.slice(stream.dataOffset, stream.dataOffset + stream.dataLength);
    return decodeStream(stream.dict, raw, (v) => this.resolveValue(v), {
      budget: this.budget,
      structural,
    });
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

  /**
   * The object `ref` names in `xref`. A reference met again while it is being read (a /Length
   * or object stream that leads back to itself) is 422 PDF_UNREADABLE, and so is a chain of
   * references deeper than any real file has.
   */
  getObject(ref: PdfRef, xref: Map<number, XrefEntry> = this.xref): PdfObject | undefined {
    const entry = xref.get(ref.num);
    if (!entry || entry.kind === 'free') return undefined;
    if (entry.kind === 'offset' && entry.gen !== ref.gen) return undefined;
    if (this.reading.has(ref.num)) {
      throw pdfErrors.unreadable(`object ${ref.num} refers to itself while it is read`);
    }
    if (this.reading.size >= maxReferenceDepth) {
      throw pdfErrors.unreadable('references nested too deep');
    }
    this.reading.add(ref.num);
    try {
      if (entry.kind === 'compressed')
        return this.compressedObject(entry.stream, entry.index, xref);
      this.budget.object();
      const parser = this.parserAt(entry.offset);
      return parser.parseIndirectObject(ref, (length) => {
        // The length as the same revision says it: a later one must not re-cut an older stream.
        const resolved = length instanceof PdfRef ? this.getObject(length, xref) : length;
        if (typeof resolved !== 'number' || !Number.isInteger(resolved) || resolved < 0)
          throw pdfErrors.unreadable(`stream ${ref.key} has no valid /Length`);
        return resolved;
      }).object;
    } finally {
      this.reading.delete(ref.num);
    }
  }

  /**
   * Object `index` of object stream `streamNum` as `xref` (one revision's view) locates it: a
   * later update may give the stream's number to another object stream, so the cache is keyed
   * by where the stream lies, not by its number.
   */
  private compressedObject(
    streamNum: number,
    index: number,
    xref: Map<number, XrefEntry>,
  ): PdfObject | undefined {
    const streamEntry = xref.get(streamNum);
    // An object stream is never itself compressed (that would also let it hold itself).
    if (streamEntry?.kind !== 'offset') return undefined;
    const objectStream =
      this.objectStreams.get(streamEntry.offset) ??
      this.loadObjectStream(streamNum, streamEntry.offset, streamEntry.gen, xref);
    const offset = objectStream.offsets[index];
    if (offset === undefined) return undefined;
    this.budget.object();
    return new PdfParser(
      new BufferSource(objectStream.data),
      objectStream.first + offset,
      this.budget,
    ).parseValue();
  }

  private loadObjectStream(
    streamNum: number,
    offset: number,
    gen: number,
    xref: Map<number, XrefEntry>,
  ) {
    this.budget.objectStream();
    const stream = this.getObject(new PdfRef(streamNum, gen), xref);
    if (!(stream instanceof PdfStream) || !isName(stream.dict.get('Type'), 'ObjStm')) {
      throw pdfErrors.unreadable(`object stream ${streamNum} not found`);
    }
    const n = stream.dict.get('N');
    const first = stream.dict.get('First');
    if (
      typeof n !== 'number' ||
      typeof first !== 'number' ||
      !Number.isInteger(n) ||
      !Number.isInteger(first) ||
      n < 0 ||
      first < 0
    ) {
      throw pdfErrors.unreadable(`bad object stream ${streamNum}`);
    }
    const data = this.streamData(stream, true);
    // Each object takes two numbers and a separator in the header at least.
    if (first > data.length || n * 3 > first) {
      throw pdfErrors.unreadable(`bad object stream ${streamNum}`);
    }
    const header = new PdfParser(new BufferSource(data), 0, this.budget);
    const offsets: number[] = [];
    for (let i = 0; i < n; i++) {
      header.readInteger();
      offsets.push(header.readInteger());
    }
    const objectStream = { data, offsets, first };
    this.objectStreams.set(offset, objectStream);
    this.objectStreamBytes += data.length;
    while (
      this.objectStreams.size > maxObjectStreamCache ||
      (this.objectStreams.size > 1 && this.objectStreamBytes > maxObjectStreamCacheBytes)
    ) {
      const [oldest, evicted] = this.objectStreams.entries().next().value!;
      this.objectStreams.delete(oldest);
      this.objectStreamBytes -= evicted.data.length;
    }
    return objectStream;
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
    return terminalFields(Array.isArray(top) ? top : [], (value) => this.resolveValue(value));
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

/**
 * Decodes a stream's bytes: FlateDecode (with PNG predictors) or no filter, nothing else. Each
 * step may produce only what the budget has room for: a decompression bomb stops there.
 */
export function decodeStream(
  dict: PdfDict,
  raw: Buffer,
  resolve: (value: PdfValue | undefined) => PdfValue | undefined,
  limit: { budget: PdfBudget; structural: boolean } = {
    budget: new PdfBudget(currentPdfLimits()),
    structural: false,
  },
): Buffer {
  const { budget, structural } = limit;
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
    const room = budget.inflateRoom(structural);
    try {
      data = zlib.inflateSync(data, {
        finishFlush: zlib.constants.Z_SYNC_FLUSH,
        maxOutputLength: Math.max(1, room),
        chunkSize: 64 * 1024,
      });
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') {
        throw budget.inflateExceeded(structural);
      }
      throw pdfErrors.unreadable('a compressed stream is corrupt');
    }
    if (data.length > room) throw budget.inflateExceeded(structural);
    budget.inflatedBytes(data.length);
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

/** Column widths of an xref stream's rows, and its (first, count) ranges: checked, not trusted. */
function xrefStreamLayout(dict: PdfDict): { w: number[]; ranges: number[] } {
  const widths = dict.get('W');
  const size = dict.get('Size');
  const isCount = (v: PdfValue | undefined): v is number =>
    typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= maxObjectNumber + 1;
  if (!Array.isArray(widths) || widths.length !== 3 || !isCount(size)) {
    throw pdfErrors.unreadable('bad xref stream dictionary');
  }
  // A field is at most 8 bytes (offsets of files far beyond any we read); a row has some.
  if (!widths.every((v) => isCount(v) && v <= 8)) throw pdfErrors.unreadable('bad xref stream /W');
  const w = widths as number[];
  if (w[0]! + w[1]! + w[2]! === 0) throw pdfErrors.unreadable('xref stream rows of width 0');
  const index = dict.get('Index');
  const ranges = index === undefined ? [0, size] : index;
  if (!Array.isArray(ranges) || ranges.length % 2 !== 0 || !ranges.every(isCount)) {
    throw pdfErrors.unreadable('bad xref stream /Index');
  }
  for (let r = 0; r < ranges.length; r += 2) {
    // /Size is one more than the highest object number of the file.
    if ((ranges[r] as number) + (ranges[r + 1] as number) > size) {
      throw pdfErrors.unreadable('xref stream /Index beyond its /Size');
    }
  }
  return { w, ranges: ranges as number[] };
}
