import { EngineError } from '../engineError';
import { currentPdfLimits, PdfBudget } from './budget';
import { pdfErrors } from './errors';
import { ObjectStreams } from './objectStreams';
import { PdfDict, type PdfObject, PdfRef, PdfStream, type PdfValue } from './objects';
import { type ByteSource, FileSource, PdfParser } from './parser';
import { decodeStream } from './streams';
import { readXrefChain, type XrefEntry, type XrefSection } from './xref';

/** References followed one inside another (a /Length, an object stream) before giving up. */
const maxReferenceDepth = 32;

/**
 * Reads a PDF by seeking: the trailer and xref chain first (`xref.ts`), then only the objects
 * asked for, those in object streams through `objectStreams.ts`. Refuses, before anything else
 * is done, what the signing layer cannot handle: files that are not PDFs, encrypted PDFs, and
 * PDFs whose cross-reference data does not parse. The page tree (`pages.ts`) and the form
 * fields (`fields.ts`) are read through it.
 */
export class PdfReader {
  /** Newest section first. */
  readonly sections: XrefSection[] = [];
  readonly xref = new Map<number, XrefEntry>();
  private readonly objectStreams: ObjectStreams;
  /** Object numbers being read, innermost last: a reference back to one of them is a loop. */
  private readonly reading = new Set<number>();

  private constructor(
    readonly source: ByteSource,
    readonly budget: PdfBudget,
  ) {
    this.objectStreams = new ObjectStreams(
      budget,
      (ref, xref) => this.getObject(ref, xref),
      (stream) => this.streamData(stream, true),
    );
  }

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
    const decode = (stream: PdfStream) => this.streamData(stream, true);
    for (const section of readXrefChain(this.source, this.budget, decode)) {
      this.sections.push(section);
      for (const [num, entry] of section.entries) {
        if (!this.xref.has(num)) this.xref.set(num, entry);
      }
    }
    if (this.trailer.get('Encrypt') !== undefined) throw pdfErrors.encrypted();
    if (!(this.resolve(this.trailer.get('Root')) instanceof PdfDict)) {
      throw pdfErrors.unreadable('no document catalog');
    }
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
      if (entry.kind === 'compressed') {
        return this.objectStreams.object(entry.stream, entry.index, xref);
      }
      this.budget.object();
      const parser = new PdfParser(this.source, entry.offset, this.budget);
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
}
