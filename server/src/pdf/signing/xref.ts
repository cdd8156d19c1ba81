import { maxObjectNumber, type PdfBudget } from './budget';
import { pdfErrors } from './errors';
import { isName, PdfDict, PdfStream, type PdfValue } from './objects';
import { type ByteSource, lastIndexOf, PdfParser } from './parser';

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

/** The shortest classic cross-reference entry: ten digits, five digits, a letter, 2 separators. */
const minXrefTableEntry = 18;

/**
 * The cross-reference sections of the file in `source`, newest first: from the last
 * `startxref` along the `/Prev` chain, each section read as it is reached (a loop in the chain
 * is 422 PDF_UNREADABLE). `decode` gives an xref stream's decoded bytes.
 */
export function* readXrefChain(
  source: ByteSource,
  budget: PdfBudget,
  decode: (stream: PdfStream) => Buffer,
): Generator<XrefSection> {
  const startxref = lastIndexOf(source, 'startxref', source.length, 2048);
  if (startxref < 0) throw pdfErrors.unreadable('no startxref');
  const sections = new XrefSections(source, budget, decode);
  let offset: number | undefined = sections.parserAt(startxref + 'startxref'.length).readInteger();
  const seen = new Set<number>();
  while (offset !== undefined) {
    if (seen.has(offset)) throw pdfErrors.unreadable('the xref chain loops');
    seen.add(offset);
    budget.xrefSection();
    const section = sections.read(offset);
    yield section;
    const prev = section.trailer.get('Prev');
    offset = typeof prev === 'number' ? prev : undefined;
  }
}

/** Reads one cross-reference section, a table or a stream, and where its revision ends. */
class XrefSections {
  constructor(
    private readonly source: ByteSource,
    private readonly budget: PdfBudget,
    private readonly decode: (stream: PdfStream) => Buffer,
  ) {}

  parserAt(offset: number): PdfParser {
    return new PdfParser(this.source, offset, this.budget);
  }

  read(offset: number): XrefSection {
    const parser = this.parserAt(offset);
    parser.skipWhitespace();
    if (this.source.slice(parser.pos, parser.pos + 4).toString('latin1') === 'xref') {
      parser.pos += 4;
      return this.readTable(offset, parser);
    }
    const stream = this.readStream(offset);
    return { offset, type: 'stream', hybrid: false, ...stream };
  }

  /** A classic table whose `xref` keyword `parser` has just passed. */
  private readTable(offset: number, parser: PdfParser): XrefSection {
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
      if (count * minXrefTableEntry > this.source.length - parser.pos) {
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
      const stream = this.readStream(xrefStm);
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

  private readStream(offset: number): {
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
    const data = this.decode(object);
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
