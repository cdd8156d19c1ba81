/**
 * PNG row filtering (PNG specification, section 9), for both sides that meet it: a PNG's image
 * data (`png.ts`) and a PDF stream with `/Predictor` 10 to 15 (`streams.ts`), which stores its
 * rows the same way. Each row of samples is written behind one filter-type byte; a filter
 * predicts each byte from the byte one pixel to the left, the byte above and the one above-left:
 * 0 None, 1 Sub, 2 Up, 3 Average, 4 Paeth.
 */

/**
 * The bytes of one row of `columns` pixels of `bitsPerPixel` bits, and the filters' pixel
 * stride (the bytes of a whole pixel, at least 1 when a pixel has fewer than 8 bits).
 */
export function pngRowLayout(
  columns: number,
  bitsPerPixel: number,
): { rowBytes: number; pixelBytes: number } {
  return {
    rowBytes: Math.ceil((columns * bitsPerPixel) / 8),
    pixelBytes: Math.max(1, Math.ceil(bitsPerPixel / 8)),
  };
}

function paeth(left: number, up: number, upLeft: number): number {
  const p = left + up - upLeft;
  const pa = Math.abs(p - left);
  const pb = Math.abs(p - up);
  const pc = Math.abs(p - upLeft);
  return pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
}

/**
 * Reverses the row filters of the first `rows` rows of `data` (each `rowBytes` bytes behind
 * its filter byte) and returns the rows without their filter bytes. A filter type other than
 * 0 to 4 throws what `unknownFilter` makes of it (the caller's error, with the row's index).
 */
export function unfilterPngRows(
  data: Buffer,
  rows: number,
  { rowBytes, pixelBytes }: { rowBytes: number; pixelBytes: number },
  unknownFilter: (filter: number, row: number) => Error,
): Buffer {
  const out = Buffer.alloc(rows * rowBytes);
  // A row of no bytes has nothing to filter: its filter byte is not looked at.
  if (rowBytes <= 0) return out;
  for (let r = 0; r < rows; r++) {
    const filter = data[r * (rowBytes + 1)]!;
    const src = r * (rowBytes + 1) + 1;
    const dst = r * rowBytes;
    const above = dst - rowBytes;
    switch (filter) {
      case 0:
        data.copy(out, dst, src, src + rowBytes);
        break;
      case 1:
        for (let i = 0; i < rowBytes; i++) {
          const left = i >= pixelBytes ? out[dst + i - pixelBytes]! : 0;
          out[dst + i] = (data[src + i]! + left) & 0xff;
        }
        break;
      case 2:
        if (r === 0) data.copy(out, dst, src, src + rowBytes);
        else
          for (let i = 0; i < rowBytes; i++)
            out[dst + i] = (data[src + i]! + out[above + i]!) & 0xff;
        break;
      case 3:
        for (let i = 0; i < rowBytes; i++) {
          const left = i >= pixelBytes ? out[dst + i - pixelBytes]! : 0;
          const up = r > 0 ? out[above + i]! : 0;
          out[dst + i] = (data[src + i]! + ((left + up) >> 1)) & 0xff;
        }
        break;
      case 4:
        for (let i = 0; i < rowBytes; i++) {
          const left = i >= pixelBytes ? out[dst + i - pixelBytes]! : 0;
          const up = r > 0 ? out[above + i]! : 0;
          const upLeft = r > 0 && i >= pixelBytes ? out[above + i - pixelBytes]! : 0;
          out[dst + i] = (data[src + i]! + paeth(left, up, upLeft)) & 0xff;
        }
        break;
      default:
        throw unknownFilter(filter, r);
    }
  }
  return out;
}

/** `rows` rows of `rowBytes` bytes from `pixels`, each behind filter type 0 (None). */
export function unfilteredPngRows(pixels: Buffer, rows: number, rowBytes: number): Buffer {
  const out = Buffer.alloc((rowBytes + 1) * rows);
  for (let r = 0; r < rows; r++) {
    pixels.copy(out, r * (rowBytes + 1) + 1, r * rowBytes, (r + 1) * rowBytes);
  }
  return out;
}
