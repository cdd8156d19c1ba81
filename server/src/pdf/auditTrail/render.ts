import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import { type Color, PDFDocument, type PDFFont, type PDFPage, rgb } from 'pdf-lib';
import { type DejaVuFace, dejaVuSansBytes, loadFontkit, subsetTag } from '../fonts/dejaVuSans';
import { wrapText } from '../fonts/wrapText';
import type {
  AuditTrailEvent,
  AuditTrailInput,
  AuditTrailLabels,
  RenderedAuditTrail,
} from './types';

/**
 * The pdf-lib side of the audit trail (see ./index): A4 portrait, DejaVu Sans regular and bold
 * embedded as subsets, a classic xref table (what our incremental signer appends to most
 * simply), metadata dated `generatedAt` so that the same input gives the same bytes.
 */

const [pageWidth, pageHeight] = [595.28, 841.89];
const margin = 42;
const contentWidth = pageWidth - 2 * margin;
const black = rgb(0, 0, 0);
const grey = rgb(0.4, 0.4, 0.4);
const ruleGrey = rgb(0.75, 0.75, 0.75);
const shade = rgb(0.95, 0.95, 0.95);

const titleSize = 14;
const textSize = 8.5;
const secondarySize = 7;
const cellSize = 8;
const cellLeading = 10;
const cellPadding = 3;
const footerY = 24;

/** Vietnam keeps UTC+07:00 all year: times are shown there, with the offset said once. */
const vietnamOffsetMs = 7 * 60 * 60 * 1000;

/** A label's key: its words in both languages come with the input. */
type Label = Exclude<keyof AuditTrailLabels, 'page'>;

interface Fonts {
  regular: PDFFont;
  bold: PDFFont;
  /** Characters each font has a glyph for. */
  charsets: Map<PDFFont, Set<number>>;
}

interface Style {
  font: PDFFont;
  size: number;
  color: Color;
}

/** Wrapped lines, each with its style. */
type TextBlock = { text: string; style: Style }[];

interface Column {
  label: Label;
  width: number;
  cell: (event: AuditTrailEvent, index: number) => string;
}

function formatTime(at: Date, locale: 'vi' | 'en'): string {
  const shifted = new Date(at.getTime() + vietnamOffsetMs);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const day = p(shifted.getUTCDate());
  const month = p(shifted.getUTCMonth() + 1);
  const year = p(shifted.getUTCFullYear(), 4);
  const time = `${p(shifted.getUTCHours())}:${p(shifted.getUTCMinutes())}:${p(shifted.getUTCSeconds())}`;
  return locale === 'vi' ? `${day}/${month}/${year} ${time}` : `${year}-${month}-${day} ${time}`;
}

class AuditTrailLayout {
  private readonly pages: PDFPage[] = [];
  private page!: PDFPage;
  /** Baseline cursor: the top of the next thing drawn. */
  private y = 0;
  private readonly columns: Column[];
  private readonly header: { title: TextBlock; rows: [TextBlock, TextBlock][] };

  constructor(
    private readonly doc: PDFDocument,
    private readonly fonts: Fonts,
    private readonly input: AuditTrailInput,
  ) {
    const locale = this.locale;
    this.columns = [
      { label: 'number', width: 30, cell: (_, index) => String(index + 1) },
      // Wide enough for "26/11/2026 10:00:00" on one line.
      { label: 'time', width: 92, cell: (event) => formatTime(event.at, locale) },
      { label: 'actor', width: 118, cell: (event) => event.actor },
      { label: 'action', width: 110, cell: (event) => event.action },
      { label: 'details', width: contentWidth - 350, cell: (event) => event.details ?? '' },
    ];
    const labelWidth = 110;
    const valueWidth = contentWidth - labelWidth;
    const value = { font: fonts.regular, size: textSize, color: black };
    const generatedAt = `${formatTime(input.generatedAt, locale)} (${this.pick('timeZone')[0]})`;
    this.header = {
      title: this.block(
        input.title,
        { font: fonts.bold, size: titleSize, color: black },
        contentWidth,
      ),
      rows: (
        [
          ['document', input.documentName],
          ['hash', input.documentHash],
          ['generatedAt', generatedAt],
        ] as const
      ).map(([label, text]): [TextBlock, TextBlock] => [
        this.labelBlock(label, labelWidth),
        this.block(text, value, valueWidth),
      ]),
    };
  }

  private get locale(): 'vi' | 'en' {
    return this.input.locale ?? 'vi';
  }

  /** The words in the locale, then in the other language. */
  private get languages(): [AuditTrailLabels, AuditTrailLabels] {
    const { vi, en } = this.input.labels;
    return this.locale === 'vi' ? [vi, en] : [en, vi];
  }

  /** [primary, secondary] in the locale's order. */
  private pick(label: Label): [string, string] {
    const [primary, secondary] = this.languages;
    return [primary[label], secondary[label]];
  }

  /**
   * Text as the font can draw it: NFC, tabs as spaces, other control characters dropped,
   * characters without a glyph as "?"; line breaks kept.
   */
  private printable(text: string, font: PDFFont): string {
    const charset = this.fonts.charsets.get(font)!;
    let result = '';
    for (const character of text.normalize('NFC').replace(/\r\n?/g, '\n')) {
      if (character === '\n') result += character;
      else if (character === '\t') result += ' ';
      else if (/\p{Cc}/u.test(character)) continue;
      else result += charset.has(character.codePointAt(0)!) ? character : '?';
    }
    return result;
  }

  /** The text wrapped to `width`; line breaks in it are kept. */
  private lines(text: string, style: Style, width: number): string[] {
    const widthOf = (line: string) => style.font.widthOfTextAtSize(line, style.size);
    return this.printable(text, style.font)
      .split('\n')
      .flatMap((paragraph) => {
        const wrapped = wrapText(paragraph, width, widthOf);
        return wrapped.length > 0 ? wrapped : [''];
      });
  }

  private block(text: string, style: Style, width: number): TextBlock {
    return this.lines(text, style, width).map((line) => ({ text: line, style }));
  }

  /** A label: the primary language in bold, the secondary beneath it in grey. */
  private labelBlock(label: Label, width: number): TextBlock {
    const [primary, secondary] = this.pick(label);
    return [
      ...this.block(primary, { font: this.fonts.bold, size: cellSize, color: black }, width),
      ...this.block(
        secondary,
        { font: this.fonts.regular, size: secondarySize, color: grey },
        width,
      ),
    ];
  }

  /** Draws a block's lines from `top` down; returns the height used. */
  private drawBlock(block: TextBlock, x: number, top: number): number {
    let y = top;
    for (const { text, style } of block) {
      y -= style.size * 1.25;
      if (text !== '') {
        this.page.drawText(text, {
          x,
          y: y + style.size * 0.25,
          size: style.size,
          font: style.font,
          color: style.color,
        });
      }
    }
    return top - y;
  }

  private rule(y: number, thickness = 0.5, color = ruleGrey): void {
    this.page.drawLine({
      start: { x: margin, y },
      end: { x: pageWidth - margin, y },
      thickness,
      color,
    });
  }

  /** A new page with the header and the table's column labels; the cursor below them. */
  private newPage(): void {
    this.page = this.doc.addPage([pageWidth, pageHeight]);
    this.pages.push(this.page);
    let y = pageHeight - margin;
    y -= this.drawBlock(this.header.title, margin, y) + 6;
    for (const [label, value] of this.header.rows) {
      const used = Math.max(
        this.drawBlock(label, margin, y),
        this.drawBlock(value, margin + 110, y),
      );
      y -= used + 4;
    }
    this.rule(y, 1, black);
    y -= 4;
    let x = margin;
    let used = 0;
    for (const column of this.columns) {
      const block = this.labelBlock(column.label, column.width - 2 * cellPadding);
      used = Math.max(used, this.drawBlock(block, x + cellPadding, y));
      x += column.width;
    }
    y -= used + 4;
    this.rule(y, 0.75, black);
    this.y = y;
  }

  /**
   * One event as a table row, continued on the next page when it does not fit; a continued
   * part repeats the first column (the event's number) marked as continued.
   */
  private drawRow(cells: string[][], shaded: boolean): void {
    const [primary, secondary] = this.pick('continued');
    const continuedFirst = [...(cells[0] ?? []), `(${primary}`, `${secondary})`];
    const total = Math.max(1, ...cells.map((lines) => lines.length));
    let from = 0;
    while (from < total) {
      const room = Math.floor((this.y - margin - 2 * cellPadding) / cellLeading);
      // Start a new page rather than leave a lone line of a row at the foot of one.
      if (room < Math.min(2, total - from)) {
        this.newPage();
        continue;
      }
      const count = Math.min(room, total - from);
      const height = count * cellLeading + 2 * cellPadding;
      if (shaded) {
        this.page.drawRectangle({
          x: margin,
          y: this.y - height,
          width: contentWidth,
          height,
          color: shade,
        });
      }
      let x = margin;
      this.columns.forEach((column, i) => {
        const lines =
          i === 0 && from > 0
            ? continuedFirst.slice(0, count)
            : cells[i]!.slice(from, from + count);
        lines.forEach((line, k) => {
          if (line === '') return;
          this.page.drawText(line, {
            x: x + cellPadding,
            y: this.y - cellPadding - (k + 1) * cellLeading + 2.5,
            size: cellSize,
            font: this.fonts.regular,
            color: black,
          });
        });
        x += column.width;
      });
      this.y -= height;
      this.rule(this.y);
      from += count;
    }
  }

  draw(): PDFPage[] {
    this.newPage();
    const style = { font: this.fonts.regular, size: cellSize, color: black };
    if (this.input.events.length === 0) {
      const [primary, secondary] = this.pick('noEvents');
      this.drawRow(
        this.columns.map((column, i) =>
          i === 4
            ? this.lines(`${primary} (${secondary})`, style, column.width - 2 * cellPadding)
            : [],
        ),
        false,
      );
    }
    this.input.events.forEach((event, index) => {
      const cells = this.columns.map((column) =>
        this.lines(column.cell(event, index), style, column.width - 2 * cellPadding),
      );
      this.drawRow(cells, index % 2 === 1);
    });
    this.drawFooters();
    return this.pages;
  }

  /** "Trang n/N · Page n/N" (the locale's first) at the foot of every page, once the count is known. */
  private drawFooters(): void {
    const total = this.pages.length;
    const [primary, secondary] = this.languages;
    this.pages.forEach((page, i) => {
      const text = `${primary.page(i + 1, total)} · ${secondary.page(i + 1, total)}`;
      const width = this.fonts.regular.widthOfTextAtSize(text, cellSize);
      page.drawText(text, {
        x: (pageWidth - width) / 2,
        y: footerY,
        size: cellSize,
        font: this.fonts.regular,
        color: grey,
      });
    });
  }
}

async function embedFonts(doc: PDFDocument, input: AuditTrailInput): Promise<Fonts> {
  doc.registerFontkit(await loadFontkit());
  const seed = JSON.stringify(input);
  const embed = async (face: DejaVuFace, postscriptName: string) =>
    doc.embedFont(await dejaVuSansBytes(face), {
      subset: true,
      customName: `${subsetTag(face, seed)}+${postscriptName}`,
    });
  const regular = await embed('regular', 'DejaVuSans');
  const bold = await embed('bold', 'DejaVuSans-Bold');
  const charsets = new Map([regular, bold].map((font) => [font, new Set(font.getCharacterSet())]));
  return { regular, bold, charsets };
}

/** See `renderAuditTrail` in ./index, which validates the input first. */
export async function renderAuditTrailPdf(
  input: AuditTrailInput,
  outPath: string,
): Promise<RenderedAuditTrail> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const fonts = await embedFonts(doc, input);
  const pages = new AuditTrailLayout(doc, fonts, input).draw();
  doc.setTitle(input.title);
  doc.setLanguage(input.locale === 'en' ? 'en' : 'vi-VN');
  doc.setProducer('ESign');
  doc.setCreator('ESign audit trail');
  doc.setCreationDate(input.generatedAt);
  doc.setModificationDate(input.generatedAt);
  const bytes = await doc.save({ useObjectStreams: false });
  // Whole or not at all: a reader of outPath never sees half a file.
  const temp = `${outPath}.${crypto.randomUUID()}.part`;
  try {
    await fs.writeFile(temp, bytes, { flag: 'wx' });
    await fs.rename(temp, outPath);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
  return { pages: pages.length, bytes: bytes.length };
}
