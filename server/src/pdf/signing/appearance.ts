import { wrapText } from '../fonts/wrapText';
import { AppearanceFont, type FontSubset } from './embeddedFont';
import { dict, name, PdfNewStream, type PdfRef } from './objects';
import type { PngImage } from './png';

/**
 * The picture drawn under the text of a visible signature (the `image_signature` method's):
 * a JPEG as it is (DCTDecode), or a decoded PNG (FlateDecode, alpha as /SMask).
 */
export type SignatureImage =
  | {
      format: 'jpeg';
      jpeg: Buffer;
      width: number;
      height: number;
      colorSpace: 'DeviceRGB' | 'DeviceGray' | 'DeviceCMYK';
    }
  | ({ format: 'png' } & PngImage);

/** `[x1 y1 x2 y2]` in the page's default user space (points). */
export type SignatureRect = [number, number, number, number];

/** Room between the box's edge and the text, in points. */
const padding = 2;
const largestFontSize = 10;
const smallestFontSize = 4;
const fontSizeStep = 0.5;
const leadingFactor = 1.2;

/** The text of a visible signature, laid out in its box and encoded for the subset font. */
export interface AppearanceText {
  /** Text-showing operators (`BT … ET`) naming the font `/F1`; empty when nothing is drawn. */
  operators: string;
  /** The subset to embed as `/F1`, absent when nothing is drawn. */
  subset?: FontSubset;
}

/**
 * Lays the lines out in the box: the largest font size (10 pt down to 4 pt) at which the lines,
 * wrapped to the box's width, fit its height. At 4 pt, lines that still do not fit are left out
 * rather than drawn over the box's edge.
 */
export async function appearanceText(
  rect: SignatureRect,
  lines: string[],
): Promise<AppearanceText> {
  const font = await AppearanceFont.load();
  const width = Math.abs(rect[2] - rect[0]) - 2 * padding;
  const height = Math.abs(rect[3] - rect[1]) - 2 * padding;
  const printable = lines
    .flatMap((line) => line.split(/\r\n|\r|\n/))
    .map((line) => font.printable(line).trim());
  const lineBox = (font.ascent - font.descent) / 1000;
  let fontSize = largestFontSize;
  let wrapped: string[] = [];
  for (; fontSize >= smallestFontSize; fontSize -= fontSizeStep) {
    const maxWidth = (width / fontSize) * 1000;
    wrapped = printable.flatMap((line) =>
      line === '' ? [''] : wrapText(line, maxWidth, (text) => font.widthOf(text)),
    );
    const needed = fontSize * (leadingFactor * (wrapped.length - 1) + lineBox);
    if (needed <= height) break;
  }
  fontSize = Math.max(fontSize, smallestFontSize);
  const leading = fontSize * leadingFactor;
  const fitting = Math.max(0, Math.floor((height - fontSize * lineBox) / leading) + 1);
  const drawn = wrapped.slice(0, fitting);
  while (drawn.length > 0 && drawn[drawn.length - 1] === '') drawn.pop();
  if (drawn.length === 0) return { operators: '' };
  const subset = await font.subset(drawn);
  const top = padding + height - (fontSize * font.ascent) / 1000;
  let operators = `BT /F1 ${fmt(fontSize)} Tf ${padding} ${fmt(top)} Td\n`;
  drawn.forEach((line, i) => {
    if (i > 0) operators += `0 ${fmt(-leading)} Td\n`;
    if (line !== '') operators += `<${subset.encode(line)}> Tj\n`;
  });
  operators += 'ET\n';
  return { operators, subset };
}

const fmt = (value: number) => value.toFixed(2).replace(/\.?0+$/, '');

/** The image scaled to fit the box with its proportions kept, centred. */
function imagePlacement(width: number, height: number, image: { width: number; height: number }) {
  const scale = Math.min(width / image.width, height / image.height);
  const w = image.width * scale;
  const h = image.height * scale;
  return `q ${fmt(w)} 0 0 ${fmt(h)} ${fmt((width - w) / 2)} ${fmt((height - h) / 2)} cm /Im1 Do Q\n`;
}

/**
 * The appearance stream of a visible signature: the optional image fitted into the box (its
 * proportions kept), then the text (signer name, date) from the top left.
 */
export function appearanceStream(
  rect: SignatureRect,
  text: Pick<AppearanceText, 'operators'>,
  fontRef: PdfRef | undefined,
  image: { ref: PdfRef; width: number; height: number } | undefined,
): PdfNewStream {
  const width = Math.abs(rect[2] - rect[0]);
  const height = Math.abs(rect[3] - rect[1]);
  const imageRef = image?.ref;
  let content = '';
  if (image) content += imagePlacement(width, height, image);
  content += text.operators;
  return new PdfNewStream(
    dict({
      Type: name('XObject'),
      Subtype: name('Form'),
      BBox: [0, 0, width, height],
      Resources: dict({
        Font: fontRef ? dict({ F1: fontRef }) : undefined,
        XObject: imageRef ? dict({ Im1: imageRef }) : undefined,
      }),
    }),
    Buffer.from(content, 'latin1'),
  );
}

/** Rows behind a PNG filter byte each: how the PDF reader undoes the prediction. */
const pngPredictor = (colors: number, columns: number) =>
  dict({ Predictor: 15, Colors: colors, BitsPerComponent: 8, Columns: columns });

/** The image XObject of a JPEG as it is. */
export const jpegXObject = (image: Extract<SignatureImage, { format: 'jpeg' }>) =>
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

/** The image XObject of a decoded PNG, naming its alpha image (`smaskRef`) when it has one. */
export const pngXObject = (image: PngImage, smaskRef: PdfRef | undefined) =>
  new PdfNewStream(
    dict({
      Type: name('XObject'),
      Subtype: name('Image'),
      Width: image.width,
      Height: image.height,
      ColorSpace: name(image.colorSpace),
      BitsPerComponent: 8,
      Filter: name('FlateDecode'),
      DecodeParms: pngPredictor(image.colorSpace === 'DeviceRGB' ? 3 : 1, image.width),
      SMask: smaskRef,
    }),
    image.color,
  );

/** The soft mask (alpha) of a PNG: a gray image of the same size. */
export const alphaXObject = (image: PngImage & { alpha: Buffer }) =>
  new PdfNewStream(
    dict({
      Type: name('XObject'),
      Subtype: name('Image'),
      Width: image.width,
      Height: image.height,
      ColorSpace: name('DeviceGray'),
      BitsPerComponent: 8,
      Filter: name('FlateDecode'),
      DecodeParms: pngPredictor(1, image.width),
    }),
    image.alpha,
  );

/** An empty appearance: PDF/A and some validators want `/AP` even on an invisible widget. */
export const emptyAppearance = () =>
  new PdfNewStream(
    dict({ Type: name('XObject'), Subtype: name('Form'), BBox: [0, 0, 0, 0] }),
    Buffer.alloc(0),
  );
