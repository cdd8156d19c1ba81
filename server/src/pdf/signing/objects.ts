/**
 * The PDF object model of the signing layer: just enough to read the structures a signature
 * touches (trailer, catalog, pages, AcroForm, signature dictionaries) and to write new or
 * changed objects into an incremental update. Names and strings keep their raw bytes so that a
 * rewritten object says exactly what the original said.
 */

export class PdfName {
  /** The name's bytes as a latin1 string (after #xx decoding). */
  constructor(readonly name: string) {}
}

export class PdfRef {
  constructor(
    readonly num: number,
    readonly gen: number,
  ) {}
  get key(): string {
    return `${this.num} ${this.gen}`;
  }
}

export class PdfString {
  constructor(
    readonly bytes: Buffer,
    readonly hex = false,
  ) {}
}

export class PdfDict {
  readonly entries = new Map<string, PdfValue>();
  get(key: string): PdfValue | undefined {
    return this.entries.get(key);
  }
  set(key: string, value: PdfValue): this {
    this.entries.set(key, value);
    return this;
  }
}

/** A stream as read from the file: its dictionary and where its raw (encoded) bytes lie. */
export class PdfStream {
  constructor(
    readonly dict: PdfDict,
    readonly dataOffset: number,
    readonly dataLength: number,
  ) {}
}

/** A stream this layer writes: its dictionary (without /Length) and its encoded bytes. */
export class PdfNewStream {
  constructor(
    readonly dict: PdfDict,
    readonly data: Buffer,
  ) {}
}

/** A literal whose serialized form is fixed in advance (placeholders patched in place). */
export class PdfRaw {
  constructor(readonly text: string) {}
}

export type PdfValue =
  | null
  | boolean
  | number
  | PdfName
  | PdfString
  | PdfRef
  | PdfDict
  | PdfValue[]
  | PdfRaw;

export type PdfObject = PdfValue | PdfStream | PdfNewStream;

export const name = (value: string): PdfName => new PdfName(value);

export function dict(entries: Record<string, PdfValue | undefined>): PdfDict {
  const result = new PdfDict();
  for (const [key, value] of Object.entries(entries)) {
    if (value !== undefined) result.set(key, value);
  }
  return result;
}

/**
 * A text string as PDF wants it: PDFDocEncoding-safe ASCII stays a literal string, anything
 * else (Vietnamese names and reasons) is UTF-16BE with a byte order mark.
 */
export function textString(text: string): PdfString {
  if (/^[\x20-\x7e]*$/.test(text)) return new PdfString(Buffer.from(text, 'latin1'));
  const utf16 = Buffer.from(text, 'utf16le');
  utf16.swap16();
  return new PdfString(Buffer.concat([Buffer.from([0xfe, 0xff]), utf16]), true);
}

/** Reads a PDF text string back (UTF-16BE with BOM, UTF-8 with BOM, else PDFDocEncoding ~ latin1). */
export function decodeTextString(value: PdfString): string {
  const b = value.bytes;
  if (b.length >= 2 && b[0] === 0xfe && b[1] === 0xff) {
    const utf16 = Buffer.from(b.subarray(2));
    if (utf16.length % 2 === 1) return utf16.subarray(0, -1).swap16().toString('utf16le');
    return utf16.swap16().toString('utf16le');
  }
  if (b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) {
    return b.subarray(3).toString('utf8');
  }
  return b.toString('latin1');
}

/** `D:YYYYMMDDHHmmSSZ`, the PDF date of a UTC instant. */
export function pdfDate(date: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `D:${p(date.getUTCFullYear(), 4)}${p(date.getUTCMonth() + 1)}${p(date.getUTCDate())}${p(
    date.getUTCHours(),
  )}${p(date.getUTCMinutes())}${p(date.getUTCSeconds())}Z`;
}

/** Parses a PDF date (`D:YYYYMMDDHHmmSSOHH'mm'`, every part after the year optional). */
export function parsePdfDate(text: string): Date | undefined {
  const m =
    /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?([Z+-])?(\d{2})?'?(\d{2})?'?/.exec(
      text.trim(),
    );
  if (!m) return undefined;
  const n = (s: string | undefined, d: number) => (s === undefined ? d : Number(s));
  let ms = Date.UTC(n(m[1], 0), n(m[2], 1) - 1, n(m[3], 1), n(m[4], 0), n(m[5], 0), n(m[6], 0));
  if (m[7] === '+' || m[7] === '-') {
    const offset = (n(m[8], 0) * 60 + n(m[9], 0)) * 60_000;
    ms += m[7] === '+' ? -offset : offset;
  }
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

const regularNameByte = (c: number) =>
  c > 0x20 && c < 0x7f && c !== 0x23 && !'()<>[]{}/%'.includes(String.fromCharCode(c));

function serializeName(value: string): string {
  let out = '/';
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i) & 0xff;
    out += regularNameByte(c) ? value[i] : `#${c.toString(16).padStart(2, '0')}`;
  }
  return out;
}

function serializeNumber(value: number): string {
  if (Number.isInteger(value)) return String(value);
  // Never exponent notation, which PDF has not; six decimals is beyond any reader's precision.
  return value.toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
}

function serializeString(value: PdfString): string {
  if (value.hex || value.bytes.some((c) => c < 0x20 || c > 0x7e)) {
    return `<${value.bytes.toString('hex').toUpperCase()}>`;
  }
  return `(${value.bytes.toString('latin1').replace(/[\\()]/g, (c) => `\\${c}`)})`;
}

/** The PDF syntax of a direct value (streams are written by the writer). */
export function serialize(value: PdfValue): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return serializeNumber(value);
  if (value instanceof PdfName) return serializeName(value.name);
  if (value instanceof PdfString) return serializeString(value);
  if (value instanceof PdfRef) return `${value.num} ${value.gen} R`;
  if (value instanceof PdfRaw) return value.text;
  if (Array.isArray(value)) return `[${value.map(serialize).join(' ')}]`;
  const parts: string[] = [];
  for (const [key, entry] of value.entries) {
    parts.push(`${serializeName(key)} ${serialize(entry)}`);
  }
  return `<<${parts.join(' ')}>>`;
}

export const isName = (value: PdfObject | undefined, expected?: string): value is PdfName =>
  value instanceof PdfName && (expected === undefined || value.name === expected);
