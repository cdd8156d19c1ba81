import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { PDFDocument, type PDFForm, type PDFPage } from 'pdf-lib';

const run = promisify(execFile);

export const repoRoot = path.resolve(__dirname, '../../..');
export const exampleTemplateFile = path.join(repoRoot, 'examples/hop-dong-mau.pdf');

/** A one-page PDF; `build` adds form fields (none: a PDF without a form). */
export async function makePdf(
  build: (form: PDFForm, page: PDFPage) => void = () => undefined,
): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([400, 400]);
  page.drawText('Test form', { x: 20, y: 370, size: 12 });
  build(doc.getForm(), page);
  return doc.save();
}

/** A PDF whose trailer says it is encrypted. */
export async function encryptedPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.addPage();
  doc.context.trailerInfo.Encrypt = doc.context.obj({ Filter: 'Standard', V: 2, R: 3 });
  return doc.save();
}

/** A form with a limited text field, a dropdown, a radio group and a push button. */
export function choiceForm(form: PDFForm, page: PDFPage): void {
  const code = form.createTextField('maSo');
  code.addToPage(page, { x: 20, y: 320, width: 200, height: 20 });
  code.setMaxLength(5);
  const city = form.createDropdown('thanhPho');
  city.addOptions(['Hà Nội', 'Đà Nẵng', 'TP. Hồ Chí Minh']);
  city.addToPage(page, { x: 20, y: 280, width: 200, height: 20 });
  const gender = form.createRadioGroup('gioiTinh');
  gender.addOptionToPage('Nam', page, { x: 20, y: 240, width: 14, height: 14 });
  gender.addOptionToPage('Nữ', page, { x: 60, y: 240, width: 14, height: 14 });
  form.createButton('gui').addToPage('Send', page, { x: 20, y: 200, width: 60, height: 20 });
}

export function writeTemp(dir: string, name: string, bytes: Uint8Array | string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  return file;
}

/** The text poppler's pdftotext extracts, in reading layout. */
export async function pdftotext(file: string): Promise<string> {
  return (await run('pdftotext', ['-layout', '-enc', 'UTF-8', file, '-'])).stdout;
}

/** poppler's pdffonts table rows: name, type, encoding, embedded, subset, unicode. */
export async function pdffonts(
  file: string,
): Promise<{ name: string; embedded: boolean; subset: boolean }[]> {
  const { stdout } = await run('pdffonts', [file]);
  return stdout
    .split('\n')
    .slice(2)
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const columns = line.trim().split(/\s+/);
      // ... emb sub uni objectId generation
      const [emb, sub] = columns.slice(-5, -3);
      return { name: columns[0]!, embedded: emb === 'yes', subset: sub === 'yes' };
    });
}

/**
 * How many dark pixels poppler draws in a rectangle of page 1 (PDF points from the bottom-left
 * corner), rendered at 72 dpi in grey.
 */
export async function darkPixels(
  file: string,
  box: { x: number; y: number; width: number; height: number; pageHeight: number },
): Promise<number> {
  const { stdout } = await run(
    'pdftoppm',
    [
      '-r',
      '72',
      '-gray',
      '-f',
      '1',
      '-l',
      '1',
      '-x',
      String(Math.round(box.x)),
      '-y',
      String(Math.round(box.pageHeight - box.y - box.height)),
      '-W',
      String(box.width),
      '-H',
      String(box.height),
      file,
    ],
    { encoding: 'buffer' },
  );
  // PGM (P5): three header lines, then one byte per pixel.
  let offset = 0;
  for (let lines = 0; lines < 3; offset += 1) if (stdout[offset] === 0x0a) lines += 1;
  return [...stdout.subarray(offset)].filter((value) => value < 128).length;
}
