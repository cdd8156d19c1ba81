import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { findActiveContent } from '../../src/pdf/signing/activeContent';
import { PdfReader } from '../../src/pdf/signing/document';
import { pageBox } from '../../src/pdf/signing/pages';
import { classicPdf, qpdf, qpdfCheck } from '../signing/pdf/corpus';
import { filterRows } from '../signing/pdf/pngs';

/**
 * The reader undoes `/Predictor` 10 to 15 with the PNG row filters the signature-image decoder
 * uses (pdf/signing/pngRows.ts). qpdf writes its xref stream with Up rows only; the tests'
 * own encoder rewrites that stream with each filter type, qpdf must still accept the file (its
 * rows are right), and the reader must read the same cross-reference entries and every object.
 */

jest.setTimeout(60_000);

let dir: string;
let original: string;
/** The xref stream qpdf wrote: where its data lies, its columns, its rows unfiltered. */
let xref: { dataStart: number; dataEnd: number; lengthAt: number; lengthText: string };
let rows: Buffer[];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-pdf-predictors-'));
  const classic = path.join(dir, 'classic.pdf');
  fs.writeFileSync(classic, await classicPdf(3));
  original = path.join(dir, 'objstm.pdf');
  qpdf(['--object-streams=generate'], classic, original);
  const bytes = fs.readFileSync(original);
  const text = bytes.toString('latin1');
  const start = Number(/startxref\s+(\d+)\s+%%EOF\s*$/.exec(text)![1]);
  const head = /^\d+ 0 obj\s*(<<.*?>>)\s*stream\r?\n/s.exec(text.slice(start))!;
  const dict = head[1]!;
  expect(dict).toMatch(/\/Type \/XRef/);
  expect(dict).toMatch(/\/Predictor 12/);
  const columns = Number(/\/Columns (\d+)/.exec(dict)![1]);
  const length = /\/Length (\d+)/.exec(dict)!;
  const dataStart = start + head[0].length;
  const dataEnd = dataStart + Number(length[1]);
  xref = {
    dataStart,
    dataEnd,
    lengthAt: start + head.index + head[0].indexOf(length[0]),
    lengthText: length[0],
  };
  // Undo qpdf's Up rows here, by hand: each byte plus the one above.
  const data = zlib.inflateSync(bytes.subarray(dataStart, dataEnd));
  rows = [];
  for (let at = 0; at + columns < data.length; at += columns + 1) {
    expect(data[at]).toBe(2);
    const above = rows.at(-1) ?? Buffer.alloc(columns);
    rows.push(Buffer.from(data.subarray(at + 1, at + 1 + columns).map((b, i) => b + above[i]!)));
  }
  expect(rows.length).toBeGreaterThan(10);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The file with its xref stream's data replaced by `rowsData` (filter bytes included). */
function withXrefRows(name: string, rowsData: Buffer): string {
  const bytes = fs.readFileSync(original);
  const data = zlib.deflateSync(rowsData);
  const file = path.join(dir, name);
  fs.writeFileSync(
    file,
    Buffer.concat([
      bytes.subarray(0, xref.lengthAt),
      Buffer.from(`/Length ${data.length}`, 'latin1'),
      bytes.subarray(xref.lengthAt + xref.lengthText.length, xref.dataStart),
      data,
      bytes.subarray(xref.dataEnd),
    ]),
  );
  return file;
}

const entriesOf = (file: string) => PdfReader.read(file, (reader) => [...reader.xref]);

it.each([0, 1, 2, 3, 4] as const)(
  'reads an xref stream whose rows use PNG filter %i as qpdf does',
  (filter) => {
    const file = withXrefRows(`filter${filter}.pdf`, Buffer.concat(filterRows(rows, 1, filter)));
    const check = qpdfCheck(file);
    expect(check.output).toMatch(/No syntax or stream encoding errors found/);
    expect(check.output).not.toMatch(/WARNING/);
    expect(check.ok).toBe(true);
    expect(entriesOf(file)).toEqual(entriesOf(original));
    // Every object resolves, those in object streams too, and the page tree reads.
    expect(PdfReader.read(file, (reader) => findActiveContent(reader))).toEqual([]);
    expect(pageBox(file).pageCount).toBe(3);
  },
);

it('refuses a row with an unknown filter type: 422 PDF_UNREADABLE naming it', () => {
  const filtered = filterRows(rows, 1, 2);
  filtered[3]![0] = 5;
  const file = withXrefRows('filter5.pdf', Buffer.concat(filtered));
  let caught: unknown;
  try {
    entriesOf(file);
  } catch (error) {
    caught = error;
  }
  expect(caught).toMatchObject({
    code: 'PDF_UNREADABLE',
    message: expect.stringContaining('unknown PNG predictor 5'),
  });
});
