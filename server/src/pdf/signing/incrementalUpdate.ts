import type { PdfReader } from './document';
import { pdfErrors } from './errors';
import { dict, name, PdfNewStream, PdfRef, type PdfValue, serialize } from './objects';

/**
 * One incremental update: new and rewritten objects appended after the file's last byte, with
 * a cross-reference section of the file's own kind and `/Prev` pointing to the previous one.
 * Earlier bytes are never touched, so every earlier signature keeps its byte range.
 *
 * - a file whose last section is a classic table (hybrid files included) gets a classic table:
 *   our objects are plain indirect objects, so they need no xref stream, and the previous
 *   section (with its `/XRefStm`) stays reachable through `/Prev` as the hybrid rules say;
 * - a file whose last section is an xref stream gets an xref stream (readers of such files
 *   may not expect a table after it).
 */
export class IncrementalUpdate {
  private readonly objects = new Map<number, { ref: PdfRef; object: PdfValue | PdfNewStream }>();
  private nextNumber: number;

  constructor(private readonly reader: PdfReader) {
    const size = reader.trailer.get('Size');
    if (typeof size !== 'number') throw pdfErrors.unreadable('the trailer has no /Size');
    // A writer that under-counts /Size must not make us reuse a live object's number.
    this.nextNumber = size;
    for (const num of reader.xref.keys()) if (num >= this.nextNumber) this.nextNumber = num + 1;
  }

  allocate(): PdfRef {
    return new PdfRef(this.nextNumber++, 0);
  }

  put(ref: PdfRef, object: PdfValue | PdfNewStream): void {
    this.objects.set(ref.num, { ref, object });
  }

  /**
   * The bytes of the update when appended at `startOffset` (the current file size). A leading
   * EOL is added when the file does not end with one, so that our first object starts a line.
   */
  serialize(startOffset: number, lastByte: number): Buffer {
    const parts: Buffer[] = [];
    let position = startOffset;
    const push = (chunk: Buffer | string) => {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk;
      parts.push(buffer);
      position += buffer.length;
    };
    if (lastByte !== 0x0a && lastByte !== 0x0d) push('\n');
    const offsets = new Map<number, { offset: number; gen: number }>();
    const sorted = [...this.objects.values()].sort((a, b) => a.ref.num - b.ref.num);
    for (const { ref, object } of sorted) {
      offsets.set(ref.num, { offset: position, gen: ref.gen });
      push(`${ref.num} ${ref.gen} obj\n`);
      if (object instanceof PdfNewStream) {
        const streamDict = dict({});
        for (const [key, value] of object.dict.entries) streamDict.set(key, value);
        streamDict.set('Length', object.data.length);
        push(`${serialize(streamDict)}\nstream\n`);
        push(object.data);
        push('\nendstream\nendobj\n');
      } else {
        push(`${serialize(object)}\nendobj\n`);
      }
    }
    const previous = this.reader.sections[0]!;
    const trailer = dict({
      Size: this.nextNumber,
      Root: this.reader.trailer.get('Root'),
      Info: this.reader.trailer.get('Info'),
      ID: this.reader.trailer.get('ID'),
      Prev: previous.offset,
    });
    if (previous.type === 'table') {
      const xrefOffset = position;
      let table = 'xref\n0 1\n0000000000 65535 f\r\n';
      for (const [first, run] of runs([...offsets.keys()])) {
        table += `${first} ${run.length}\n`;
        for (const num of run) {
          const entry = offsets.get(num)!;
          table += `${String(entry.offset).padStart(10, '0')} ${String(entry.gen).padStart(5, '0')} n\r\n`;
        }
      }
      push(table);
      push(`trailer\n${serialize(trailer)}\nstartxref\n${xrefOffset}\n%%EOF\n`);
    } else {
      const xrefRef = new PdfRef(this.nextNumber++, 0);
      trailer.set('Size', this.nextNumber);
      const xrefOffset = position;
      offsets.set(xrefRef.num, { offset: xrefOffset, gen: 0 });
      const numbers = [...offsets.keys()].sort((a, b) => a - b);
      const index: number[] = [];
      const rows: Buffer[] = [];
      for (const [first, run] of runs(numbers)) {
        index.push(first, run.length);
        for (const num of run) {
          const row = Buffer.alloc(7);
          row[0] = 1;
          row.writeUInt32BE(offsets.get(num)!.offset, 1);
          row.writeUInt16BE(offsets.get(num)!.gen, 5);
          rows.push(row);
        }
      }
      const data = Buffer.concat(rows);
      trailer.set('Type', name('XRef'));
      trailer.set('W', [1, 4, 2]);
      trailer.set('Index', index);
      trailer.set('Length', data.length);
      if (xrefOffset > 0xffffffff) throw pdfErrors.unreadable('the file is too large');
      push(`${xrefRef.num} 0 obj\n${serialize(trailer)}\nstream\n`);
      push(data);
      push(`\nendstream\nendobj\nstartxref\n${xrefOffset}\n%%EOF\n`);
    }
    return Buffer.concat(parts);
  }
}

/** Consecutive runs of sorted object numbers, as xref subsections want them. */
function runs(sorted: number[]): [number, number[]][] {
  const result: [number, number[]][] = [];
  for (const num of sorted) {
    const last = result[result.length - 1];
    if (last && last[1][last[1].length - 1] === num - 1) last[1].push(num);
    else result.push([num, [num]]);
  }
  return result;
}
