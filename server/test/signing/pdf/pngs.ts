import zlib from 'node:zlib';

/** One PNG chunk: length, type, data, CRC over type and data. */
function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

export interface PngSpec {
  width: number;
  height: number;
  /** PNG colour type: 0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA. */
  colorType: 0 | 2 | 3 | 4 | 6;
  depth: 1 | 2 | 4 | 8 | 16;
  /** Packed scanlines without filter bytes. */
  rows: Buffer[];
  palette?: Buffer;
  transparency?: Buffer;
  /** The filter byte of every row (0..4); the encoder applies it. */
  filter?: 0 | 1 | 2 | 3 | 4;
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as const;

/**
 * `rows` (bare samples) each behind filter byte `filter`, filtered with `bpp` bytes a pixel:
 * the tests' own encoder, independent of the decoder under test (pdf/signing/pngRows.ts).
 */
export function filterRows(rows: Buffer[], bpp: number, filter: 0 | 1 | 2 | 3 | 4): Buffer[] {
  return rows.map((row, y) => {
    const up = y > 0 ? rows[y - 1]! : Buffer.alloc(row.length);
    const out = Buffer.alloc(row.length + 1);
    out[0] = filter;
    for (let x = 0; x < row.length; x++) {
      const left = x >= bpp ? row[x - bpp]! : 0;
      const upLeft = x >= bpp ? up[x - bpp]! : 0;
      const predicted = [0, left, up[x]!, (left + up[x]!) >> 1, paeth(left, up[x]!, upLeft)][
        filter
      ]!;
      out[x + 1] = (row[x]! - predicted) & 0xff;
    }
    return out;
  });
}

/** An encoder written for the tests, independent of the decoder under test. */
export function encodePng(spec: PngSpec): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(spec.width, 0);
  ihdr.writeUInt32BE(spec.height, 4);
  ihdr[8] = spec.depth;
  ihdr[9] = spec.colorType;
  const bpp = Math.max(1, (channels[spec.colorType] * spec.depth) >> 3);
  const filtered = filterRows(spec.rows, bpp, spec.filter ?? 0);
  const parts = [
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
  ];
  if (spec.palette) parts.push(chunk('PLTE', spec.palette));
  if (spec.transparency) parts.push(chunk('tRNS', spec.transparency));
  const data = zlib.deflateSync(Buffer.concat(filtered));
  // Two IDAT chunks: decoders must join them.
  const half = Math.floor(data.length / 2);
  parts.push(chunk('IDAT', data.subarray(0, half)), chunk('IDAT', data.subarray(half)));
  parts.push(chunk('IEND', Buffer.alloc(0)));
  return Buffer.concat(parts);
}

/**
 * A 40×20 RGBA signature-like picture: a dark blue stroke (opaque) across a transparent
 * background, the right half of the stroke half transparent.
 */
export function strokePng(filter: PngSpec['filter'] = 4): Buffer {
  const width = 40;
  const height = 20;
  const rows = Array.from({ length: height }, (_, y) => {
    const row = Buffer.alloc(width * 4);
    for (let x = 0; x < width; x++) {
      const onStroke = Math.abs(y - 10) <= 2;
      row.set([20, 40, 160, onStroke ? (x < 20 ? 255 : 128) : 0], x * 4);
    }
    return row;
  });
  return encodePng({ width, height, colorType: 6, depth: 8, rows, filter });
}
