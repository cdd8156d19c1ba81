import { EngineError } from '../engineError';
import type { SignatureImage } from './appearance';
import { decodePng } from './png';

const unreadable = (why: string) =>
  new EngineError('IMAGE_UNREADABLE', `The signature image is not a usable JPEG: ${why}`, {
    field: 'signatureImage',
  });

/** Start-of-frame markers of the JPEG processes a PDF reader decodes (baseline, progressive…). */
const startOfFrame = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb]);

/** Size and colour space from a JPEG's frame header; the bytes go into the PDF unchanged. */
function readJpeg(bytes: Buffer): SignatureImage {
  let at = 2;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) throw unreadable(`no marker at byte ${at}`);
    const marker = bytes[at + 1]!;
    // Fill bytes and markers without a length.
    if (marker === 0xff || (marker >= 0xd0 && marker <= 0xd8) || marker === 0x01) {
      at += marker === 0xff ? 1 : 2;
      continue;
    }
    const length = bytes.readUInt16BE(at + 2);
    if (startOfFrame.has(marker)) {
      if (at + 2 + length > bytes.length || length < 8) throw unreadable('frame header cut short');
      const height = bytes.readUInt16BE(at + 5);
      const width = bytes.readUInt16BE(at + 7);
      const components = bytes[at + 9];
      const colorSpace =
        components === 1
          ? 'DeviceGray'
          : components === 3
            ? 'DeviceRGB'
            : components === 4
              ? 'DeviceCMYK'
              : undefined;
      if (!colorSpace) throw unreadable(`${components} colour components`);
      if (bytes[at + 4] !== 8) throw unreadable('only 8-bit samples are supported');
      if (width < 1 || height < 1) throw unreadable('no size in its frame header');
      return { format: 'jpeg', jpeg: bytes, width, height, colorSpace };
    }
    if (marker === 0xda) break;
    at += 2 + length;
  }
  throw unreadable('no frame header');
}

/** A signature picture from its bytes: PNG (decoded) or JPEG (kept as is), else 415. */
export function readSignatureImage(bytes: Buffer): SignatureImage {
  if (bytes.length >= 8 && bytes.readUInt32BE(0) === 0x89504e47) {
    return { format: 'png', ...decodePng(bytes) };
  }
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    return readJpeg(bytes);
  }
  throw new EngineError('IMAGE_TYPE_UNSUPPORTED', 'The signature image must be a PNG or JPEG', {
    field: 'signatureImage',
  });
}
