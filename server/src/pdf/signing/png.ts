import zlib from 'node:zlib';
import { EngineError } from '../engineError';
import { pngRowLayout, unfilteredPngRows, unfilterPngRows } from './pngRows';

/**
 * A PNG decoded for a PDF image XObject: 8-bit colour samples (gray or RGB) and, when any pixel
 * is not opaque, an 8-bit alpha channel for `/SMask`. Each is zlib data of rows that start with
 * a PNG filter byte, so the PDF reads them with `/FlateDecode` and `/Predictor 15`.
 */
export interface PngImage {
  width: number;
  height: number;
  colorSpace: 'DeviceRGB' | 'DeviceGray';
  /** FlateDecode data, PNG-predicted rows (Colors 3 or 1, 8 bits). */
  color: Buffer;
  /** FlateDecode data of the alpha rows (Colors 1, 8 bits); absent when fully opaque. */
  alpha?: Buffer;
}

const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Signature images are small; this bounds what a crafted IDAT may inflate to. */
export const maxPngPixels = 4096 * 4096;

const refuse = (why: string) =>
  new EngineError('IMAGE_UNREADABLE', `The signature image is not a usable PNG: ${why}`, {
    field: 'signatureImage',
  });

/** Samples per pixel of each colour type. */
const channelsOf: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
const allowedDepths: Record<number, number[]> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
};

interface Header {
  width: number;
  height: number;
  depth: number;
  colorType: number;
}

/** Sample `index` of a row packed at `depth` bits, scaled to 8 bits unless `raw`. */
function sample(row: Buffer, index: number, depth: number, raw = false): number {
  if (depth === 8) return row[index]!;
  if (depth === 16) return row[index * 2]!;
  const perByte = 8 / depth;
  const byte = row[Math.floor(index / perByte)]!;
  const shift = 8 - depth * ((index % perByte) + 1);
  const value = (byte >> shift) & ((1 << depth) - 1);
  return raw ? value : Math.round((value * 255) / ((1 << depth) - 1));
}

/** Rows of `channels` 8-bit samples, each behind filter byte 0, deflated. */
function predictedFlate(pixels: Buffer, width: number, height: number, channels: number): Buffer {
  return zlib.deflateSync(unfilteredPngRows(pixels, height, width * channels));
}

function readChunks(bytes: Buffer) {
  if (bytes.length < 8 || !bytes.subarray(0, 8).equals(signature)) throw refuse('no PNG signature');
  let header: Header | undefined;
  let palette: Buffer | undefined;
  let transparency: Buffer | undefined;
  const idat: Buffer[] = [];
  let at = 8;
  let ended = false;
  while (at + 12 <= bytes.length) {
    const length = bytes.readUInt32BE(at);
    const type = bytes.toString('latin1', at + 4, at + 8);
    if (at + 12 + length > bytes.length) throw refuse(`chunk ${type} is cut short`);
    const data = bytes.subarray(at + 8, at + 8 + length);
    const crc = bytes.readUInt32BE(at + 8 + length);
    if (zlib.crc32(bytes.subarray(at + 4, at + 8 + length)) !== crc) {
      throw refuse(`chunk ${type} fails its CRC`);
    }
    if (type === 'IHDR') {
      if (length !== 13) throw refuse('IHDR is not 13 bytes');
      if (data[10] !== 0 || data[11] !== 0) throw refuse('unknown compression or filter method');
      if (data[12] !== 0) throw refuse('interlaced PNGs are not supported; save it without');
      header = {
        width: data.readUInt32BE(0),
        height: data.readUInt32BE(4),
        depth: data[8]!,
        colorType: data[9]!,
      };
    } else if (type === 'PLTE') palette = data;
    else if (type === 'tRNS') transparency = data;
    else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') {
      ended = true;
      break;
    }
    at += 12 + length;
  }
  if (!header) throw refuse('no IHDR');
  if (!ended) throw refuse('no IEND');
  if (idat.length === 0) throw refuse('no image data');
  return { header, palette, transparency, idat: Buffer.concat(idat) };
}

/**
 * Decodes a non-interlaced PNG of any colour type and bit depth into what a PDF image needs.
 * Throws 422 IMAGE_UNREADABLE for anything malformed, interlaced, or larger than 16 Mpixels.
 */
export function decodePng(bytes: Buffer): PngImage {
  const { header, palette, transparency, idat } = readChunks(bytes);
  const { width, height, depth, colorType } = header;
  const channels = channelsOf[colorType];
  if (channels === undefined || !allowedDepths[colorType]!.includes(depth)) {
    throw refuse(`colour type ${colorType} with bit depth ${depth}`);
  }
  if (width < 1 || height < 1 || width * height > maxPngPixels) {
    throw refuse(`${width}×${height} pixels is outside 1 to ${maxPngPixels} pixels`);
  }
  if (colorType === 3 && (!palette || palette.length % 3 !== 0)) throw refuse('no usable PLTE');
  const layout = pngRowLayout(width, channels * depth);
  const { rowBytes } = layout;
  const expected = (rowBytes + 1) * height;
  let inflated: Buffer;
  try {
    inflated = zlib.inflateSync(idat, { maxOutputLength: expected + 1 });
  } catch {
    throw refuse('its image data does not inflate to the size IHDR announces');
  }
  if (inflated.length < expected) throw refuse('its image data is shorter than IHDR announces');
  const rows = unfilterPngRows(inflated, height, layout, (filter, y) =>
    refuse(`row ${y} has filter type ${filter}`),
  );

  const gray = colorType === 0 || colorType === 4;
  const outChannels = gray ? 1 : 3;
  const color = Buffer.alloc(width * height * outChannels);
  const alpha = Buffer.alloc(width * height, 255);
  let translucent = false;
  // tRNS of gray and RGB images names one colour (16-bit values) that is fully transparent.
  const key =
    transparency && (colorType === 0 || colorType === 2)
      ? Array.from({ length: colorType === 0 ? 1 : 3 }, (_, i) => transparency.readUInt16BE(i * 2))
      : undefined;
  for (let y = 0; y < height; y++) {
    const row = rows.subarray(y * rowBytes, (y + 1) * rowBytes);
    for (let x = 0; x < width; x++) {
      const pixel = y * width + x;
      let a = 255;
      if (colorType === 3) {
        const index = sample(row, x, depth, true);
        if (index * 3 + 2 >= palette!.length) throw refuse(`palette index ${index} out of range`);
        palette!.copy(color, pixel * 3, index * 3, index * 3 + 3);
        if (transparency && index < transparency.length) a = transparency[index]!;
      } else {
        const first = x * channels;
        for (let c = 0; c < outChannels; c++) {
          color[pixel * outChannels + c] = sample(row, first + c, depth);
        }
        if (colorType === 4 || colorType === 6) a = sample(row, first + channels - 1, depth);
        else if (key) {
          const raw = Array.from({ length: key.length }, (_, c) =>
            depth === 16 ? row.readUInt16BE((first + c) * 2) : sample(row, first + c, depth, true),
          );
          if (raw.every((value, c) => value === key[c])) a = 0;
        }
      }
      alpha[pixel] = a;
      if (a !== 255) translucent = true;
    }
  }
  return {
    width,
    height,
    colorSpace: gray ? 'DeviceGray' : 'DeviceRGB',
    color: predictedFlate(color, width, height, outChannels),
    ...(translucent ? { alpha: predictedFlate(alpha, width, height, 1) } : {}),
  };
}
