import zlib from 'node:zlib';
import type { Font, Glyph } from '@pdf-lib/fontkit';
import { dejaVuSansFont, subsetTag } from '../fonts/dejaVuSans';
import type { IncrementalUpdate } from './incrementalUpdate';
import { dict, name, PdfNewStream, type PdfRef, PdfString } from './objects';

/**
 * The Unicode font of visible signatures: DejaVu Sans embedded as a subset (only the glyphs the
 * appearance shows, a few KB) in a Type0 / CIDFontType2 font with Identity encoding, so that any
 * Vietnamese text prints as typed and a /ToUnicode CMap gives the exact text back to readers.
 *
 * Glyphs are taken one per character from the font's cmap, without shaping (no ligatures, no
 * kerning): widths stay the plain advances, so layout, /W and text extraction agree.
 */

/** What a character the font cannot draw is drawn as: the appearance is a picture of the text. */
const missingGlyphReplacement = '?';

/** Text space units per em in PDF glyph widths. */
const pdfUnitsPerEm = 1000;

export class AppearanceFont {
  private constructor(private readonly font: Font) {}

  static async load(): Promise<AppearanceFont> {
    return new AppearanceFont(await dejaVuSansFont('regular'));
  }

  private scale(value: number): number {
    return Math.round((value * pdfUnitsPerEm) / this.font.unitsPerEm);
  }

  /** `ascent` and `descent` (negative) in thousandths of the font size. */
  get ascent(): number {
    return this.scale(this.font.ascent);
  }

  get descent(): number {
    return this.scale(this.font.descent);
  }

  /**
   * The text as it will be drawn: NFC (precomposed Vietnamese letters have their own glyphs),
   * white space as plain spaces, other control characters removed, characters without a glyph
   * replaced.
   */
  printable(text: string): string {
    let result = '';
    for (const character of text.normalize('NFC').replace(/\s/gu, ' ')) {
      const codePoint = character.codePointAt(0)!;
      if (/\p{Cc}/u.test(character)) continue;
      result += this.font.hasGlyphForCodePoint(codePoint) ? character : missingGlyphReplacement;
    }
    return result;
  }

  private glyph(character: string): Glyph {
    return this.font.glyphForCodePoint(character.codePointAt(0)!);
  }

  /** Width of printable text in thousandths of the font size. */
  widthOf(text: string): number {
    let width = 0;
    for (const character of text) width += this.scale(this.glyph(character).advanceWidth);
    return width;
  }

  /**
   * A subset holding the glyphs of `texts` (printable text). Character identifiers are the
   * subset's glyph ids (CIDToGIDMap /Identity); the tag derives from the glyphs, so the same
   * text gives the same font bytes.
   */
  async subset(texts: string[]): Promise<FontSubset> {
    const subset = this.font.createSubset();
    const cidOf = new Map<string, number>();
    const mapped: MappedGlyph[] = [];
    for (const character of texts.join('')) {
      if (cidOf.has(character)) continue;
      const glyph = this.glyph(character);
      const cid = subset.includeGlyph(glyph);
      cidOf.set(character, cid);
      // Two characters sharing a glyph read back as the first of them.
      if (!mapped.some((m) => m.cid === cid)) {
        mapped.push({ cid, text: character, width: this.scale(glyph.advanceWidth) });
      }
    }
    const fontFile = await new Promise<Buffer>((resolve, reject) => {
      const parts: Uint8Array[] = [];
      const stream = subset.encodeStream() as SubsetStreamWithErrors;
      stream
        .on('data', (bytes) => parts.push(bytes))
        .on('end', () => resolve(Buffer.concat(parts)));
      stream.on('error', reject);
    });
    const tag = subsetTag(mapped.map((m) => m.text).join(''));
    const box = this.font.bbox;
    return {
      baseFont: `${tag}+${this.font.postscriptName ?? 'DejaVuSans'}`,
      encode: (text) => {
        let hex = '';
        for (const character of text) {
          const cid = cidOf.get(character);
          if (cid === undefined) throw new Error(`"${character}" is not in the font subset`);
          hex += cid.toString(16).padStart(4, '0');
        }
        return hex.toUpperCase();
      },
      glyphs: mapped.sort((a, b) => a.cid - b.cid),
      fontFile,
      bbox: [box.minX, box.minY, box.maxX, box.maxY].map((v) => this.scale(v)),
      ascent: this.ascent,
      descent: this.descent,
      // DejaVu's OS/2 table predates sCapHeight: the height of "H" is the cap height.
      capHeight: this.scale(this.font.capHeight ?? this.glyph('H').bbox.maxY),
      italicAngle: this.font.italicAngle,
    };
  }
}

/** fontkit's stream also reports errors, which its type declaration leaves out. */
type SubsetStreamWithErrors = ReturnType<ReturnType<Font['createSubset']>['encodeStream']> & {
  on(event: 'error', callback: (error: Error) => void): unknown;
};

interface MappedGlyph {
  cid: number;
  /** The character the glyph stands for (what /ToUnicode gives back). */
  text: string;
  /** Advance width in thousandths of the font size. */
  width: number;
}

export interface FontSubset {
  /** `ABCDEF+DejaVuSans`. */
  baseFont: string;
  /** The hex string (without `<>`) of 2-byte CIDs showing `text`, which must be in the subset. */
  encode(text: string): string;
  glyphs: MappedGlyph[];
  /** The subset TrueType file (unencoded). */
  fontFile: Buffer;
  bbox: number[];
  ascent: number;
  descent: number;
  capHeight: number;
  italicAngle: number;
}

const utf16Hex = (text: string) => {
  const bytes = Buffer.from(text, 'utf16le');
  bytes.swap16();
  return bytes.toString('hex').toUpperCase();
};

/** A ToUnicode CMap (PDF 32000-1 §9.10.3) mapping each 2-byte CID to its character. */
function toUnicodeCMap(glyphs: MappedGlyph[]): Buffer {
  const lines = [
    '/CIDInit /ProcSet findresource begin',
    '12 dict begin',
    'begincmap',
    '/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def',
    '/CMapName /Adobe-Identity-UCS def',
    '/CMapType 2 def',
    '1 begincodespacerange',
    '<0000> <FFFF>',
    'endcodespacerange',
  ];
  // At most 100 mappings per block, as the CMap syntax requires.
  for (let start = 0; start < glyphs.length; start += 100) {
    const block = glyphs.slice(start, start + 100);
    lines.push(`${block.length} beginbfchar`);
    for (const glyph of block) {
      lines.push(
        `<${glyph.cid.toString(16).padStart(4, '0').toUpperCase()}> <${utf16Hex(glyph.text)}>`,
      );
    }
    lines.push('endbfchar');
  }
  lines.push('endcmap', 'CMapName currentdict /CMap defineresource pop', 'end', 'end');
  return Buffer.from(`${lines.join('\n')}\n`, 'latin1');
}

const flateStream = (entries: Parameters<typeof dict>[0], data: Buffer) =>
  new PdfNewStream(dict({ ...entries, Filter: name('FlateDecode') }), zlib.deflateSync(data));

/**
 * Writes the subset's five objects (Type0 font, CIDFont, descriptor, font file, ToUnicode) into
 * the update and returns the Type0 font's reference, what a `/Font` resource names.
 */
export function putFontSubset(
  update: IncrementalUpdate,
  subset: Omit<FontSubset, 'encode'>,
): PdfRef {
  const [fontRef, cidFontRef, descriptorRef, fileRef, toUnicodeRef] = [1, 2, 3, 4, 5].map(() =>
    update.allocate(),
  ) as [PdfRef, PdfRef, PdfRef, PdfRef, PdfRef];
  update.put(
    fontRef,
    dict({
      Type: name('Font'),
      Subtype: name('Type0'),
      BaseFont: name(subset.baseFont),
      Encoding: name('Identity-H'),
      DescendantFonts: [cidFontRef],
      ToUnicode: toUnicodeRef,
    }),
  );
  const first = subset.glyphs[0]?.cid ?? 1;
  const consecutive = subset.glyphs.every((glyph, i) => glyph.cid === first + i);
  update.put(
    cidFontRef,
    dict({
      Type: name('Font'),
      Subtype: name('CIDFontType2'),
      BaseFont: name(subset.baseFont),
      CIDSystemInfo: dict({
        Registry: new PdfString(Buffer.from('Adobe')),
        Ordering: new PdfString(Buffer.from('Identity')),
        Supplement: 0,
      }),
      FontDescriptor: descriptorRef,
      CIDToGIDMap: name('Identity'),
      W: consecutive
        ? [first, subset.glyphs.map((glyph) => glyph.width)]
        : subset.glyphs.flatMap((glyph) => [glyph.cid, [glyph.width]]),
    }),
  );
  update.put(
    descriptorRef,
    dict({
      Type: name('FontDescriptor'),
      FontName: name(subset.baseFont),
      // Symbolic: the font has characters outside the standard Latin set.
      Flags: 4,
      FontBBox: subset.bbox,
      ItalicAngle: subset.italicAngle,
      Ascent: subset.ascent,
      Descent: subset.descent,
      CapHeight: subset.capHeight,
      // No stem width in a TrueType file; 80 is the customary stand-in.
      StemV: 80,
      FontFile2: fileRef,
    }),
  );
  update.put(fileRef, flateStream({ Length1: subset.fontFile.length }, subset.fontFile));
  update.put(toUnicodeRef, flateStream({}, toUnicodeCMap(subset.glyphs)));
  return fontRef;
}
