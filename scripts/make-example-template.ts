/**
 * Writes examples/hop-dong-mau.pdf: a one-page contract form with fillable AcroForm fields for
 * `source: template` files (see docs/process-definitions.md). Run from the repository root:
 *
 *   node --import tsx scripts/make-example-template.ts [output.pdf]
 *
 * Static text is drawn with DejaVu Sans (subset) so the Vietnamese labels print; the fields keep
 * the standard Helvetica appearance of an empty form, the server fills them with its own font.
 */
import fs from 'node:fs';
import path from 'node:path';
import fontkit from '@pdf-lib/fontkit';
import { PDFDocument, type PDFFont, type PDFPage, rgb } from 'pdf-lib';

const output = path.resolve(
  process.argv[2] ?? path.join(__dirname, '../examples/hop-dong-mau.pdf'),
);
/** Fixed dates keep the output the same from run to run. */
const fixedDate = new Date('2026-01-01T00:00:00.000Z');

interface TextFieldSpec {
  name: string;
  label: string;
  y: number;
  multiline?: boolean;
  height?: number;
}

const textFields: TextFieldSpec[] = [
  { name: 'tenHopDong', label: 'Tên văn bản:', y: 660 },
  { name: 'hoTen', label: 'Bên B (họ và tên):', y: 620 },
  { name: 'soCccd', label: 'Số CCCD:', y: 580 },
  { name: 'ngayKy', label: 'Ngày ký:', y: 540 },
  { name: 'ghiChu', label: 'Ghi chú:', y: 500, multiline: true, height: 60 },
];

function label(page: PDFPage, font: PDFFont, text: string, x: number, y: number, size = 11) {
  page.drawText(text, { x, y, size, font, color: rgb(0, 0, 0) });
}

async function main(): Promise<void> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.registerFontkit(fontkit);
  doc.setTitle('Hợp đồng mẫu');
  doc.setCreator('esign scripts/make-example-template.ts');
  doc.setProducer('pdf-lib');
  doc.setCreationDate(fixedDate);
  doc.setModificationDate(fixedDate);

  const fontBytes = fs.readFileSync(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf'));
  const font = await doc.embedFont(fontBytes, { subset: true, customName: 'EXMPLA+DejaVuSans' });
  const page = doc.addPage([595.28, 841.89]);

  const centred = (text: string, y: number, size: number) =>
    label(page, font, text, (page.getWidth() - font.widthOfTextAtSize(text, size)) / 2, y, size);
  centred('CỘNG HÒA XÃ HỘI CHỦ NGHĨA VIỆT NAM', 790, 12);
  centred('Độc lập - Tự do - Hạnh phúc', 772, 11);
  centred('MẪU VĂN BẢN THỎA THUẬN', 720, 16);

  const form = doc.getForm();
  for (const spec of textFields) {
    label(page, font, spec.label, 60, spec.y + 6);
    const field = form.createTextField(spec.name);
    if (spec.multiline) field.enableMultiline();
    const height = spec.height ?? 22;
    field.addToPage(page, {
      x: 190,
      y: spec.y + 22 - height,
      width: 340,
      height,
      borderWidth: 0.5,
      borderColor: rgb(0.6, 0.6, 0.6),
    });
    field.setFontSize(11);
  }

  const agree = form.createCheckBox('dongY');
  agree.addToPage(page, { x: 60, y: 410, width: 14, height: 14, borderWidth: 0.5 });
  label(page, font, 'Bên B đồng ý với các điều khoản trên.', 82, 413);

  label(page, font, 'ĐẠI DIỆN BÊN A', 90, 350);
  label(page, font, 'ĐẠI DIỆN BÊN B', 380, 350);

  fs.writeFileSync(output, await doc.save({ useObjectStreams: false }));
  process.stdout.write(`wrote ${path.relative(process.cwd(), output)}\n`);
}

void main();
