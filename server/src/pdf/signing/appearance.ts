import { wrapText } from '../fonts/wrapText';
import { AppearanceFont, type FontSubset } from './embeddedFont';
import { dict, name, PdfNewStream, type PdfRef, type PdfValue } from './objects';
import type { PngImage } from './png';

/**
 * The picture of a visible signature (the `image_signature` method's), beside or above its text:
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

/** A part of the box, in the appearance's own space (origin at the box's lower left). */
export interface BoxArea {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The text of a visible signature, laid out in its box and encoded for the subset font. */
export interface AppearanceText {
  /** Text-showing operators (`BT … ET`) naming the font `/F1`; empty when nothing is drawn. */
  operators: string;
  /** The subset to embed as `/F1`, absent when nothing is drawn. */
  subset?: FontSubset;
  /** Where a picture goes: its own part of the box, never under the text. */
  imageArea: BoxArea;
}

/** Between the picture's part of the box and the text's, in points. */
const areaGap = 2;

/**
 * The box shared between a picture and the text so that neither covers the other: side by side
 * in a wide box (at least twice as wide as high: the picture on the left 40 %), else the
 * picture above and the text in the lower 45 %. Alone, either has the whole box.
 */
export function boxAreas(
  rect: SignatureRect,
  content: { image: boolean; text: boolean },
): { text: BoxArea; image: BoxArea } {
  const width = Math.abs(rect[2] - rect[0]);
  const height = Math.abs(rect[3] - rect[1]);
  const whole = { x: 0, y: 0, width, height };
  if (!content.image || !content.text) return { text: whole, image: whole };
  if (width >= 2 * height) {
    const imageWidth = width * 0.4;
    return {
      image: { x: 0, y: 0, width: imageWidth, height },
      text: { x: imageWidth + areaGap, y: 0, width: width - imageWidth - areaGap, height },
    };
  }
  const textHeight = height * 0.45;
  return {
    text: { x: 0, y: 0, width, height: textHeight },
    image: { x: 0, y: textHeight + areaGap, width, height: height - textHeight - areaGap },
  };
}

/**
 * Lays the lines out in their part of the box (all of it without a picture): the largest font
 * size (10 pt down to 4 pt) at which the lines, wrapped to the part's width, fit its height. At
 * 4 pt, lines that still do not fit are left out rather than drawn over the part's edge.
 */
export async function appearanceText(
  rect: SignatureRect,
  lines: string[],
  withImage = false,
): Promise<AppearanceText> {
  const font = await AppearanceFont.load();
  const printable = lines
    .flatMap((line) => line.split(/\r\n|\r|\n/))
    .map((line) => font.printable(line).trim());
  const areas = boxAreas(rect, {
    image: withImage,
    text: printable.some((line) => line !== ''),
  });
  const area = areas.text;
  const width = area.width - 2 * padding;
  const height = area.height - 2 * padding;
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
  if (drawn.length === 0) return { operators: '', imageArea: areas.image };
  const subset = await font.subset(drawn);
  const top = area.y + padding + height - (fontSize * font.ascent) / 1000;
  let operators = `BT /F1 ${fmt(fontSize)} Tf ${fmt(area.x + padding)} ${fmt(top)} Td\n`;
  drawn.forEach((line, i) => {
    if (i > 0) operators += `0 ${fmt(-leading)} Td\n`;
    if (line !== '') operators += `<${subset.encode(line)}> Tj\n`;
  });
  operators += 'ET\n';
  return { operators, subset, imageArea: areas.image };
}

const fmt = (value: number) => value.toFixed(2).replace(/\.?0+$/, '');

/** The image scaled to fit its area with its proportions kept, centred there. */
function imagePlacement(area: BoxArea, image: { width: number; height: number }) {
  const scale = Math.min(area.width / image.width, area.height / image.height);
  const w = image.width * scale;
  const h = image.height * scale;
  const x = area.x + (area.width - w) / 2;
  const y = area.y + (area.height - h) / 2;
  return `q ${fmt(w)} 0 0 ${fmt(h)} ${fmt(x)} ${fmt(y)} cm /Im1 Do Q\n`;
}

/**
 * The appearance stream of a visible signature: the optional image fitted into its own part of
 * the box (its proportions kept), then the text (signer name, date) in the other part.
 */
export function appearanceStream(
  rect: SignatureRect,
  text: Pick<AppearanceText, 'operators' | 'imageArea'>,
  fontRef: PdfRef | undefined,
  image: { ref: PdfRef; width: number; height: number } | undefined,
): PdfNewStream {
  const width = Math.abs(rect[2] - rect[0]);
  const height = Math.abs(rect[3] - rect[1]);
  const imageRef = image?.ref;
  let content = '';
  if (image) content += imagePlacement(text.imageArea, image);
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

/** An 8-bit image XObject of the image's size; `entries` say how its samples are stored. */
const imageXObject = (
  size: { width: number; height: number },
  colorSpace: string,
  entries: Record<string, PdfValue | undefined>,
  samples: Buffer,
) =>
  new PdfNewStream(
    dict({
      Type: name('XObject'),
      Subtype: name('Image'),
      Width: size.width,
      Height: size.height,
      ColorSpace: name(colorSpace),
      BitsPerComponent: 8,
      ...entries,
    }),
    samples,
  );

/** The image XObject of a JPEG as it is. */
export const jpegXObject = (image: Extract<SignatureImage, { format: 'jpeg' }>) =>
  imageXObject(image, image.colorSpace, { Filter: name('DCTDecode') }, image.jpeg);

/** The image XObject of a decoded PNG, naming its alpha image (`smaskRef`) when it has one. */
export const pngXObject = (image: PngImage, smaskRef: PdfRef | undefined) =>
  imageXObject(
    image,
    image.colorSpace,
    {
      Filter: name('FlateDecode'),
      DecodeParms: pngPredictor(image.colorSpace === 'DeviceRGB' ? 3 : 1, image.width),
      SMask: smaskRef,
    },
    image.color,
  );

/** The soft mask (alpha) of a PNG: a gray image of the same size. */
export const alphaXObject = (image: PngImage & { alpha: Buffer }) =>
  imageXObject(
    image,
    'DeviceGray',
    { Filter: name('FlateDecode'), DecodeParms: pngPredictor(1, image.width) },
    image.alpha,
  );

/** An empty appearance: PDF/A and some validators want `/AP` even on an invisible widget. */
export const emptyAppearance = () =>
  new PdfNewStream(
    dict({ Type: name('XObject'), Subtype: name('Form'), BBox: [0, 0, 0, 0] }),
    Buffer.alloc(0),
  );
