import type { PdfBudget } from './budget';
import { pdfErrors } from './errors';
import { isName, type PdfObject, PdfRef, PdfStream } from './objects';
import { BufferSource, PdfParser } from './parser';
import type { XrefEntry } from './xref';

const maxObjectStreamCache = 8;
/** Decoded object streams kept at once, in bytes (each is at most the structural stream limit). */
const maxObjectStreamCacheBytes = 32 * 1024 * 1024;

interface ObjectStream {
  data: Buffer;
  offsets: number[];
  first: number;
}

/**
 * The objects held in object streams (`/Type /ObjStm`), a few decoded streams cached at once.
 * A later update may give a stream's number to another object stream, so the cache is keyed by
 * where the stream lies, not by its number.
 */
export class ObjectStreams {
  private readonly cache = new Map<number, ObjectStream>();
  private cachedBytes = 0;

  /**
   * `getObject` reads the object stream itself as one revision's `xref` has it; `decode` gives
   * its decoded bytes (a structural stream).
   */
  constructor(
    private readonly budget: PdfBudget,
    private readonly getObject: (
      ref: PdfRef,
      xref: Map<number, XrefEntry>,
    ) => PdfObject | undefined,
    private readonly decode: (stream: PdfStream) => Buffer,
  ) {}

  /** Object `index` of object stream `streamNum` as `xref` (one revision's view) locates it. */
  object(streamNum: number, index: number, xref: Map<number, XrefEntry>): PdfObject | undefined {
    const streamEntry = xref.get(streamNum);
    // An object stream is never itself compressed (that would also let it hold itself).
    if (streamEntry?.kind !== 'offset') return undefined;
    const objectStream =
      this.cache.get(streamEntry.offset) ??
      this.load(streamNum, streamEntry.offset, streamEntry.gen, xref);
    const offset = objectStream.offsets[index];
    if (offset === undefined) return undefined;
    this.budget.object();
    return new PdfParser(
      new BufferSource(objectStream.data),
      objectStream.first + offset,
      this.budget,
    ).parseValue();
  }

  private load(
    streamNum: number,
    offset: number,
    gen: number,
    xref: Map<number, XrefEntry>,
  ): ObjectStream {
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
    const data = this.decode(stream);
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
    this.cache.set(offset, objectStream);
    this.cachedBytes += data.length;
    while (
      this.cache.size > maxObjectStreamCache ||
      (this.cache.size > 1 && this.cachedBytes > maxObjectStreamCacheBytes)
    ) {
      const [oldest, evicted] = this.cache.entries().next().value!;
      this.cache.delete(oldest);
      this.cachedBytes -= evicted.data.length;
    }
    return objectStream;
  }
}
