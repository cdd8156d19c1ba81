import { dict, name, PdfNewStream, type PdfRef } from './objects';

/** A JPEG drawn under the text of a visible signature (the `image_signature` method's picture). */
export interface SignatureImage {
  jpeg: Buffer;
  width: number;
  height: number;
  colorSpace: 'DeviceRGB' | 'DeviceGray' | 'DeviceCMYK';
}

/** `[x1 y1 x2 y2]` in the page's default user space (points). */
export type SignatureRect = [number, number, number, number];

/**
 * Text for the standard Helvetica font (WinAnsi): Vietnamese letters lose their diacritics
 * (đ → d), because the standard font has no glyphs for them. Enough for a stamp now; an
 * embedded Unicode font can replace it without changing callers.
 */
function winAnsiText(text: string): string {
  return text
    .replace(/đ/g, 'd')
    .replace(/Đ/g, 'D')
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]/g, '?')
    .replace(/[\\()]/g, (c) => `\\${c}`);
}

/**
 * The appearance stream of a visible signature: the optional image stretched over the box,
 * then the text lines (signer name, date) from the top left.
 */
export function appearanceStream(
  rect: SignatureRect,
  lines: string[],
  fontRef: PdfRef,
  imageRef: PdfRef | undefined,
): PdfNewStream {
  const width = Math.abs(rect[2] - rect[0]);
  const height = Math.abs(rect[3] - rect[1]);
  const fontSize = Math.max(4, Math.min(10, height / (lines.length + 1)));
  let content = '';
  if (imageRef) content += `q ${width} 0 0 ${height} 0 0 cm /Im1 Do Q\n`;
  content += `BT /F1 ${fontSize.toFixed(2)} Tf ${(fontSize * 1.2).toFixed(2)} TL 2 ${(
    height - fontSize * 1.1
  ).toFixed(2)} Td\n`;
  for (const line of lines) content += `(${winAnsiText(line)}) Tj T*\n`;
  content += 'ET\n';
  return new PdfNewStream(
    dict({
      Type: name('XObject'),
      Subtype: name('Form'),
      BBox: [0, 0, width, height],
      Resources: dict({
        Font: dict({ F1: fontRef }),
        XObject: imageRef ? dict({ Im1: imageRef }) : undefined,
      }),
    }),
    Buffer.from(content, 'latin1'),
  );
}

export const helveticaFont = () =>
  dict({
    Type: name('Font'),
    Subtype: name('Type1'),
    BaseFont: name('Helvetica'),
    Encoding: name('WinAnsiEncoding'),
  });

export const imageXObject = (image: SignatureImage) =>
  new PdfNewStream(
    dict({
      Type: name('XObject'),
      Subtype: name('Image'),
      Width: image.width,
      Height: image.height,
      ColorSpace: name(image.colorSpace),
      BitsPerComponent: 8,
      Filter: name('DCTDecode'),
    }),
    image.jpeg,
  );

/** An empty appearance: PDF/A and some validators want `/AP` even on an invisible widget. */
export const emptyAppearance = () =>
  new PdfNewStream(
    dict({ Type: name('XObject'), Subtype: name('Form'), BBox: [0, 0, 0, 0] }),
    Buffer.alloc(0),
  );
