import fs from 'node:fs';
import { PdfBudget } from './budget';
import { pdfErrors } from './errors';
import {
  PdfDict,
  PdfName,
  type PdfObject,
  PdfRef,
  PdfStream,
  PdfString,
  type PdfValue,
} from './objects';

/** Random access to bytes: a file read by seeking, or a decoded stream in memory. */
export interface ByteSource {
  readonly length: number;
  /** The byte at `pos`, or -1 past the end. */
  byteAt(pos: number): number;
  slice(start: number, end: number): Buffer;
}

export class BufferSource implements ByteSource {
  constructor(private readonly buffer: Buffer) {}
  get length(): number {
    return this.buffer.length;
  }
  byteAt(pos: number): number {
    return pos >= 0 && pos < this.buffer.length ? this.buffer[pos]! : -1;
  }
  slice(start: number, end: number): Buffer {
    return this.buffer.subarray(start, end);
  }
}

const blockSize = 64 * 1024;
const maxBlocks = 64;

/**
 * A file read by seeking, through a small cache of 64 KiB blocks (at most 4 MiB), so that
 * reading the trailer, xref and a few objects of a 50 MB PDF touches only those bytes.
 * Reads are synchronous: they are few and small, and it keeps the parser simple.
 */
export class FileSource implements ByteSource {
  private readonly blocks = new Map<number, Buffer>();
  private constructor(
    private readonly fd: number,
    readonly length: number,
  ) {}

  /** The file, or only its first `length` bytes (an earlier revision of a PDF). */
  static open(path: string, length?: number): FileSource {
    const fd = fs.openSync(path, 'r');
    const size = fs.fstatSync(fd).size;
    return new FileSource(fd, length === undefined ? size : Math.min(Math.max(length, 0), size));
  }

  close(): void {
    fs.closeSync(this.fd);
  }

  private block(index: number): Buffer {
    let block = this.blocks.get(index);
    if (block) {
      // Move to the end: the map's order is the LRU order.
      this.blocks.delete(index);
      this.blocks.set(index, block);
      return block;
    }
    const start = index * blockSize;
    const size = Math.min(blockSize, this.length - start);
    block = Buffer.alloc(Math.max(size, 0));
    if (size > 0) fs.readSync(this.fd, block, 0, size, start);
    this.blocks.set(index, block);
    if (this.blocks.size > maxBlocks) {
      const oldest = this.blocks.keys().next().value;
      if (oldest !== undefined) this.blocks.delete(oldest);
    }
    return block;
  }

  /** The block byteAt read last: the lexer reads byte after byte, mostly from one block. */
  private current: { index: number; block: Buffer } = { index: -1, block: Buffer.alloc(0) };

  byteAt(pos: number): number {
    if (pos < 0 || pos >= this.length) return -1;
    const index = Math.floor(pos / blockSize);
    if (index !== this.current.index) this.current = { index, block: this.block(index) };
    return this.current.block[pos - index * blockSize]!;
  }

  slice(start: number, end: number): Buffer {
    const from = Math.max(0, start);
    const to = Math.min(end, this.length);
    if (to <= from) return Buffer.alloc(0);
    const result = Buffer.alloc(to - from);
    fs.readSync(this.fd, result, 0, to - from, from);
    return result;
  }
}

const isWhite = (c: number) =>
  c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x00;
const isDelimiter = (c: number) =>
  c === 0x28 ||
  c === 0x29 ||
  c === 0x3c ||
  c === 0x3e ||
  c === 0x5b ||
  c === 0x5d ||
  c === 0x7b ||
  c === 0x7d ||
  c === 0x2f ||
  c === 0x25;
const isRegular = (c: number) => c >= 0 && !isWhite(c) && !isDelimiter(c);
const hexValue = (c: number) =>
  c >= 0x30 && c <= 0x39
    ? c - 0x30
    : c >= 0x61 && c <= 0x66
      ? c - 0x57
      : c >= 0x41 && c <= 0x46
        ? c - 0x37
        : -1;

type Token =
  | { kind: 'number'; value: number; integer: boolean }
  | { kind: 'name'; value: string }
  | { kind: 'string'; value: PdfString }
  | { kind: 'keyword'; value: string }
  | { kind: 'eof' };

/**
 * A PDF lexer and object parser over a byte source, starting at a given position. Every token
 * counts against `budget` (its clock), and arrays and dictionaries nest at most
 * `budget.limits.nesting` deep: a hostile file ends in 422 PDF_TOO_COMPLEX, never in a stack
 * overflow or a frozen thread.
 */
export class PdfParser {
  private depth = 0;

  constructor(
    readonly source: ByteSource,
    public pos: number,
    readonly budget: PdfBudget = new PdfBudget(),
  ) {}

  skipWhitespace(): void {
    for (;;) {
      const c = this.source.byteAt(this.pos);
      if (c === 0x25) {
        while (this.source.byteAt(this.pos) >= 0 && !this.isEol(this.source.byteAt(this.pos))) {
          this.pos++;
        }
      } else if (c >= 0 && isWhite(c)) {
        this.pos++;
      } else {
        return;
      }
    }
  }

  private isEol(c: number): boolean {
    return c === 0x0a || c === 0x0d;
  }

  nextToken(): Token {
    this.budget.step();
    this.skipWhitespace();
    const s = this.source;
    const c = s.byteAt(this.pos);
    if (c < 0) return { kind: 'eof' };
    if (c === 0x2f) {
      this.pos++;
      let value = '';
      for (;;) {
        const d = s.byteAt(this.pos);
        if (!isRegular(d)) break;
        if (
          d === 0x23 &&
          hexValue(s.byteAt(this.pos + 1)) >= 0 &&
          hexValue(s.byteAt(this.pos + 2)) >= 0
        ) {
          value += String.fromCharCode(
            hexValue(s.byteAt(this.pos + 1)) * 16 + hexValue(s.byteAt(this.pos + 2)),
          );
          this.pos += 3;
        } else {
          value += String.fromCharCode(d);
          this.pos++;
        }
      }
      return { kind: 'name', value };
    }
    if (c === 0x28) return { kind: 'string', value: this.literalString() };
    if (c === 0x3c) {
      if (s.byteAt(this.pos + 1) === 0x3c) {
        this.pos += 2;
        return { kind: 'keyword', value: '<<' };
      }
      return { kind: 'string', value: this.hexString() };
    }
    if (c === 0x3e && s.byteAt(this.pos + 1) === 0x3e) {
      this.pos += 2;
      return { kind: 'keyword', value: '>>' };
    }
    if (c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d) {
      this.pos++;
      return { kind: 'keyword', value: String.fromCharCode(c) };
    }
    if (isDelimiter(c))
      throw pdfErrors.unreadable(`unexpected "${String.fromCharCode(c)}" at ${this.pos}`);
    const start = this.pos;
    while (isRegular(s.byteAt(this.pos))) this.pos++;
    const text = s.slice(start, this.pos).toString('latin1');
    if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(text)) {
      return { kind: 'number', value: Number(text), integer: /^[+-]?\d+$/.test(text) };
    }
    return { kind: 'keyword', value: text };
  }

  private literalString(): PdfString {
    const s = this.source;
    this.pos++;
    const out: number[] = [];
    let depth = 1;
    for (;;) {
      const c = s.byteAt(this.pos++);
      if (c < 0) throw pdfErrors.unreadable('unterminated string');
      if (c === 0x28) depth++;
      if (c === 0x29 && --depth === 0) break;
      if (c !== 0x5c) {
        out.push(c);
        continue;
      }
      const e = s.byteAt(this.pos++);
      const simple: Record<number, number> = { 110: 10, 114: 13, 116: 9, 98: 8, 102: 12 };
      if (simple[e] !== undefined) out.push(simple[e]);
      else if (e >= 0x30 && e <= 0x37) {
        let octal = e - 0x30;
        for (let i = 0; i < 2; i++) {
          const d = s.byteAt(this.pos);
          if (d < 0x30 || d > 0x37) break;
          octal = octal * 8 + (d - 0x30);
          this.pos++;
        }
        out.push(octal & 0xff);
      } else if (e === 0x0d) {
        if (s.byteAt(this.pos) === 0x0a) this.pos++;
      } else if (e !== 0x0a) out.push(e);
    }
    return new PdfString(Buffer.from(out));
  }

  private hexString(): PdfString {
    const s = this.source;
    const start = ++this.pos;
    let end = start;
    while (s.byteAt(end) !== 0x3e) {
      if (s.byteAt(end) < 0) throw pdfErrors.unreadable('unterminated hex string');
      end++;
    }
    this.pos = end + 1;
    const digits = s
      .slice(start, end)
      .toString('latin1')
      .replace(/[\s\0]/g, '');
    if (!/^[0-9a-fA-F]*$/.test(digits)) throw pdfErrors.unreadable('bad hex string');
    return new PdfString(Buffer.from(digits.length % 2 ? `${digits}0` : digits, 'hex'), true);
  }

  /** Parses one direct value (a reference `n g R` included). */
  parseValue(): PdfValue {
    const token = this.nextToken();
    return this.valueFrom(token);
  }

  private valueFrom(token: Token): PdfValue {
    switch (token.kind) {
      case 'eof':
        throw pdfErrors.unreadable('unexpected end of data');
      case 'name':
        return new PdfName(token.value);
      case 'string':
        return token.value;
      case 'number': {
        if (!token.integer || token.value < 0) return token.value;
        const save = this.pos;
        const gen = this.nextToken();
        if (gen.kind === 'number' && gen.integer && gen.value >= 0) {
          const r = this.nextToken();
          if (r.kind === 'keyword' && r.value === 'R') return new PdfRef(token.value, gen.value);
        }
        this.pos = save;
        return token.value;
      }
      case 'keyword': {
        if (token.value === '<<' || token.value === '[') {
          if (++this.depth > this.budget.limits.nesting) {
            throw pdfErrors.tooComplex(
              `arrays and dictionaries nested more than ${this.budget.limits.nesting} deep`,
            );
          }
          try {
            return token.value === '<<' ? this.dictBody() : this.arrayBody();
          } finally {
            this.depth -= 1;
          }
        }
        if (token.value === 'true') return true;
        if (token.value === 'false') return false;
        if (token.value === 'null') return null;
        throw pdfErrors.unreadable(`unexpected "${token.value}" at ${this.pos}`);
      }
    }
  }

  private arrayBody(): PdfValue[] {
    const items: PdfValue[] = [];
    for (;;) {
      const next = this.nextToken();
      if (next.kind === 'keyword' && next.value === ']') return items;
      items.push(this.valueFrom(next));
    }
  }

  private dictBody(): PdfDict {
    const result = new PdfDict();
    for (;;) {
      const key = this.nextToken();
      if (key.kind === 'keyword' && key.value === '>>') return result;
      if (key.kind !== 'name') throw pdfErrors.unreadable(`dictionary key expected at ${this.pos}`);
      result.set(key.value, this.parseValue());
    }
  }

  expectKeyword(keyword: string): void {
    const token = this.nextToken();
    if (token.kind !== 'keyword' || token.value !== keyword) {
      throw pdfErrors.unreadable(`"${keyword}" expected at ${this.pos}`);
    }
  }

  readInteger(): number {
    const token = this.nextToken();
    if (token.kind !== 'number' || !token.integer) {
      throw pdfErrors.unreadable(`integer expected at ${this.pos}`);
    }
    return token.value;
  }

  /**
   * Parses `num gen obj value [stream ...] endobj` at the current position. The stream's
   * length is resolved by the caller (it may be an indirect reference), so this returns where
   * the data starts and lets `resolveLength` say how long it is.
   */
  parseIndirectObject(
    expected: PdfRef | undefined,
    resolveLength: (value: PdfValue | undefined) => number,
  ): { ref: PdfRef; object: PdfObject } {
    const num = this.readInteger();
    const gen = this.readInteger();
    this.expectKeyword('obj');
    if (expected && (expected.num !== num || expected.gen !== gen)) {
      throw pdfErrors.unreadable(`object ${expected.key} expected, found ${num} ${gen}`);
    }
    const value = this.parseValue();
    const save = this.pos;
    const next = this.nextToken();
    if (next.kind === 'keyword' && next.value === 'stream' && value instanceof PdfDict) {
      // The data starts after the EOL that ends the keyword (CRLF or LF).
      if (this.source.byteAt(this.pos) === 0x0d) this.pos++;
      if (this.source.byteAt(this.pos) === 0x0a) this.pos++;
      const length = resolveLength(value.get('Length'));
      const stream = new PdfStream(value, this.pos, length);
      this.pos += length;
      return { ref: new PdfRef(num, gen), object: stream };
    }
    this.pos = save;
    return { ref: new PdfRef(num, gen), object: value };
  }
}

/** The position just after the last occurrence of `needle` in the `window` bytes before `end`. */
export function lastIndexOf(
  source: ByteSource,
  needle: string,
  end: number,
  window: number,
): number {
  const start = Math.max(0, end - window);
  const index = source.slice(start, end).lastIndexOf(needle, undefined, 'latin1');
  return index < 0 ? -1 : start + index;
}
