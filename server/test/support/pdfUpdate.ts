import { PDFDict, PDFDocument, PDFName, type PDFObject, PDFRef } from 'pdf-lib';

/**
 * The tests' own incremental writer, independent of the engine's IncrementalUpdate and reader:
 * pdf-lib reads the objects (it parses the whole file, later definitions winning), this class
 * appends objects as text with a classic cross-reference table and a trailer whose `/Prev` is
 * the file's last `startxref`. It writes what it is told, valid or hostile (freed objects, a new
 * `/Root`, objects the engine would never write), so that attacks can be built from a signed
 * file. Only files whose last section is a classic table are extended (the service keeps a
 * pdf-lib source's classic table).
 */
export class TestUpdate {
  private readonly objects = new Map<number, { gen: number; body: Buffer | null }>();
  private nextNumber: number;
  private root: string;
  private readonly info: string | undefined;
  private readonly id: string | undefined;
  private readonly prev: number;

  private constructor(
    readonly base: Buffer,
    readonly doc: PDFDocument,
  ) {
    const text = base.toString('latin1');
    const startxref = text.lastIndexOf('startxref');
    const trailerAt = text.lastIndexOf('trailer', startxref);
    if (startxref < 0 || trailerAt < 0)
      throw new Error('the file does not end with a classic trailer');
    const trailer = text.slice(trailerAt, startxref);
    const size = /\/Size\s+(\d+)/.exec(trailer);
    const root = /\/Root\s+(\d+\s+\d+\s+R)/.exec(trailer);
    if (!size || !root) throw new Error('the trailer has no /Size or /Root');
    this.nextNumber = Number(size[1]);
    this.root = root[1]!;
    this.info = /\/Info\s+(\d+\s+\d+\s+R)/.exec(trailer)?.[1];
    this.id = /\/ID\s*(\[[^\]]*\])/.exec(trailer)?.[1];
    this.prev = Number(/startxref\s+(\d+)/.exec(text.slice(startxref))![1]);
  }

  static async of(base: Buffer): Promise<TestUpdate> {
    const doc = await PDFDocument.load(base, { updateMetadata: false, ignoreEncryption: true });
    return new TestUpdate(base, doc);
  }

  /** The object under `num` as pdf-lib read it (the newest definition). */
  lookup(num: number): PDFObject | undefined {
    return this.doc.context.lookup(PDFRef.of(num));
  }

  /** A copy of the dictionary under `num`, to change and put back. */
  dict(num: number): PDFDict {
    const object = this.lookup(num);
    if (!(object instanceof PDFDict)) throw new Error(`object ${num} is not a dictionary`);
    return object.clone(this.doc.context);
  }

  /** The number of an indirect value of a dictionary (`/Contents 5 0 R` → 5). */
  refIn(dict: PDFDict, key: string): number {
    const value = dict.get(PDFName.of(key));
    if (!(value instanceof PDFRef)) throw new Error(`/${key} is not a reference`);
    return value.objectNumber;
  }

  /** The catalog's number, the first page's number. */
  catalogNumber(): number {
    return Number(this.root.split(/\s+/)[0]);
  }

  pageNumber(index = 0): number {
    return this.doc.context.getObjectRef(this.doc.getPages()[index]!.node)!.objectNumber;
  }

  allocate(): number {
    return this.nextNumber++;
  }

  /** `num 0 obj <text> endobj`: `text` is written as given (any PDF syntax, valid or not). */
  put(num: number, text: string | PDFObject): this {
    const body = typeof text === 'string' ? text : text.toString();
    this.objects.set(num, { gen: 0, body: Buffer.from(body, 'latin1') });
    return this;
  }

  /** A stream: `dict` (PDF syntax, without /Length) and its bytes as given. */
  putStream(num: number, dict: string, data: Buffer | string): this {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
    const inner = dict.trim().replace(/^<<|>>$/g, '');
    const body = Buffer.concat([
      Buffer.from(`<<${inner} /Length ${bytes.length}>>\nstream\n`, 'latin1'),
      bytes,
      Buffer.from('\nendstream', 'latin1'),
    ]);
    this.objects.set(num, { gen: 0, body });
    return this;
  }

  /** Marks `num` free in this update's table (its next generation, as a writer that deletes it). */
  free(num: number): this {
    this.objects.set(num, { gen: 1, body: null });
    return this;
  }

  setRoot(num: number): this {
    this.root = `${num} 0 R`;
    return this;
  }

  /** The base file followed by this update. */
  bytes(): Buffer {
    const parts: Buffer[] = [this.base];
    let position = this.base.length;
    const push = (chunk: Buffer | string) => {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk;
      parts.push(buffer);
      position += buffer.length;
    };
    const last = this.base[this.base.length - 1];
    if (last !== 0x0a && last !== 0x0d) push('\n');
    const offsets = new Map<number, { offset: number; gen: number; free: boolean }>();
    for (const [num, { gen, body }] of [...this.objects].sort((a, b) => a[0] - b[0])) {
      if (body === null) {
        offsets.set(num, { offset: 0, gen, free: true });
        continue;
      }
      offsets.set(num, { offset: position, gen, free: false });
      push(`${num} ${gen} obj\n`);
      push(body);
      push('\nendobj\n');
    }
    const xrefAt = position;
    let table = 'xref\n';
    for (const [num, entry] of offsets) {
      table += `${num} 1\n${String(entry.offset).padStart(10, '0')} ${String(entry.gen).padStart(5, '0')} ${entry.free ? 'f' : 'n'}\r\n`;
    }
    push(table);
    const trailer = [
      `/Size ${this.nextNumber}`,
      `/Root ${this.root}`,
      this.info ? `/Info ${this.info}` : '',
      this.id ? `/ID ${this.id}` : '',
      `/Prev ${this.prev}`,
    ].join(' ');
    push(`trailer\n<< ${trailer} >>\nstartxref\n${xrefAt}\n%%EOF\n`);
    return Buffer.concat(parts);
  }
}

/** The `/ByteRange` of the signature whose dictionary comes first in the file. */
export function firstByteRange(bytes: Buffer): [number, number, number, number] {
  const match = /\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/.exec(
    bytes.toString('latin1'),
  );
  if (!match) throw new Error('no /ByteRange');
  return [Number(match[1]), Number(match[2]), Number(match[3]), Number(match[4])];
}
