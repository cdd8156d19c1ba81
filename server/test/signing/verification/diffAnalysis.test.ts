import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { PDFArray, PDFName, PDFRawStream, PDFRef } from 'pdf-lib';
import { preparePdfSignature } from '../../../src/pdf/signatureUpdates';
import { embedSignature, readSignatures } from '../../../src/pdf/signing';
import { judgeLaterRevisions } from '../../../src/signing/verification/changes';
import { contractPdf } from '../../contracts/fixtures';
import { TestUpdate } from '../../support/pdfUpdate';

/**
 * The modification analysis at the level of readSignatures + judgeLaterRevisions, on files the
 * engine prepares (the CMS is a stand-in: nothing here checks it) and the tests' own writer
 * changes. The API-level corpus is attacks.test.ts.
 */

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diff-analysis-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

let counter = 0;
const file = (bytes: Buffer) => {
  const target = path.join(dir, `file-${++counter}.pdf`);
  fs.writeFileSync(target, bytes);
  return target;
};

/** `source` with one signature (a stand-in CMS), as bytes. */
async function signed(source: Buffer): Promise<Buffer> {
  const prepared = await preparePdfSignature(file(source), {
    signingTime: new Date(),
    tempDir: dir,
  });
  await embedSignature(prepared.path, prepared, Buffer.from('3003020101', 'hex'));
  return fs.readFileSync(prepared.path);
}

/** The verdict on the engine's signature (a stand-in one may sort before it by its range). */
const firstVerdict = (bytes: Buffer) => {
  const { signatures } = readSignatures(file(bytes));
  return judgeLaterRevisions(signatures.find((s) => s.fieldName === 'Signature1')!, undefined);
};

const pageParts = (update: TestUpdate) => {
  const page = update.dict(update.pageNumber());
  const contents = page.get(PDFName.of('Contents'));
  const ref = contents instanceof PDFArray ? (contents.get(0) as PDFRef) : (contents as PDFRef);
  return { page, contents: ref.objectNumber };
};

describe('objects compared by value', () => {
  it('a page and its content stream written again, the same in another form: no change', async () => {
    const base = await signed(await contractPdf('same value'));
    const update = await TestUpdate.of(base);
    const { page, contents } = pageParts(update);
    const text = page
      .entries()
      .map(([key, value]) => `${key.toString()} ${value.toString()}`)
      .reverse()
      .join('\n');
    // Numbers as reals, the whole dictionary in another key order.
    update.put(update.pageNumber(), `<<${text.replace('595 842', '595.000 842.0')}>>`);
    // The content stream stored uncompressed instead of deflated: the same operators.
    const stream = update.lookup(contents);
    if (!(stream instanceof PDFRawStream)) throw new Error('no raw content stream');
    update.putStream(contents, '<< >>', zlib.inflateSync(Buffer.from(stream.getContents())));
    const verdict = firstVerdict(update.bytes());
    expect(verdict).toEqual({ modifiedAfterSigning: 'allowed', problems: [], changes: [] });
  });

  it('a literal string written as hex with the same bytes is no change; other bytes are', async () => {
    const base = await signed(await contractPdf('strings'));
    const same = await TestUpdate.of(base);
    const info = same.doc.context.trailerInfo.Info as PDFRef;
    const infoDict = same.dict(info.objectNumber);
    const page = same.dict(same.pageNumber());
    page.set(PDFName.of('Label'), same.doc.context.obj('x'));
    // The Info dictionary may change (metadata); the page gains a key: a change.
    same.put(info.objectNumber, infoDict);
    same.put(same.pageNumber(), page);
    const verdict = firstVerdict(same.bytes());
    expect(verdict.changes).toEqual([
      {
        revision: 2,
        object: `${same.pageNumber()} 0 R`,
        what: `changes object ${same.pageNumber()} (page 1: /Label)`,
      },
    ]);
  });
});

describe('what only the signed revision shows', () => {
  it('a reference to a missing object, filled in after signing, is a dangling reference filled in', async () => {
    const plain = await contractPdf('dangling');
    const planting = await TestUpdate.of(plain);
    const { page, contents } = pageParts(planting);
    const missing = 500;
    page.set(
      PDFName.of('Contents'),
      planting.doc.context.obj([PDFRef.of(contents), PDFRef.of(missing)]),
    );
    planting.put(planting.pageNumber(), page);
    const base = await signed(planting.bytes());
    const attack = await TestUpdate.of(base);
    attack.putStream(missing, '<< >>', '1 0 0 rg 0 0 595 842 re f');
    const verdict = firstVerdict(attack.bytes());
    expect(verdict.changes).toEqual([
      {
        revision: 3,
        object: `${missing} 0 R`,
        what: `adds object ${missing}, which the signed revision referred to without having it (a dangling reference filled in)`,
      },
    ]);
  });
});

describe('every signature field is reported', () => {
  it('a signature field dropped from the form later is still read, and the drop is a change', async () => {
    const base = await signed(await contractPdf('dropped'));
    const update = await TestUpdate.of(base);
    const catalog = update.dict(update.catalogNumber());
    const formNumber = update.refIn(catalog, 'AcroForm');
    update.put(formNumber, '<< /Fields [] >>');
    const report = readSignatures(file(update.bytes()));
    expect(report.signatures.map((s) => s.fieldName)).toEqual(['Signature1']);
    const verdict = judgeLaterRevisions(report.signatures[0]!, undefined);
    expect(verdict.problems).toEqual(["Revision 2 removes form field 'Signature1' from the form"]);
  });

  it('a signature value that is not a dictionary is an unreadable signature', async () => {
    const base = await contractPdf('not a dictionary');
    const update = await TestUpdate.of(base);
    const widget = update.allocate();
    update.put(
      widget,
      `<< /Type /Annot /Subtype /Widget /FT /Sig /T (Odd) /V (a string) /Rect [0 0 0 0] >>`,
    );
    update.put(update.allocate(), '<< >>');
    const catalog = update.dict(update.catalogNumber());
    const form = update.allocate();
    update.put(form, `<< /Fields [${widget} 0 R] >>`);
    catalog.set(PDFName.of('AcroForm'), PDFRef.of(form));
    update.put(update.catalogNumber(), catalog);
    const report = readSignatures(file(update.bytes()));
    expect(report.signatures).toEqual([]);
    expect(report.unreadableSignatures).toEqual([
      expect.objectContaining({
        fieldName: 'Odd',
        problem: 'The signature value of the field is not a dictionary',
      }),
    ]);
  });
});

describe('an empty signature field of the signed revision', () => {
  it('signed later: allowed; left empty but given an appearance: not', async () => {
    const plain = await contractPdf('empty field');
    const withField = await TestUpdate.of(plain);
    const widget = withField.allocate();
    withField.put(
      widget,
      `<< /Type /Annot /Subtype /Widget /FT /Sig /T (Later) /F 4 /Rect [0 0 0 0] /P ${withField.pageNumber()} 0 R >>`,
    );
    const form = withField.allocate();
    withField.put(form, `<< /Fields [${widget} 0 R] >>`);
    const catalog = withField.dict(withField.catalogNumber());
    catalog.set(PDFName.of('AcroForm'), PDFRef.of(form));
    withField.put(withField.catalogNumber(), catalog);
    const base = await signed(withField.bytes());

    const filled = await TestUpdate.of(base);
    const value = filled.allocate();
    filled.put(
      value,
      '<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /ETSI.CAdES.detached /ByteRange [0 1 2 3] /Contents <3000> >>',
    );
    const field = filled.dict(widget);
    field.set(PDFName.of('V'), PDFRef.of(value));
    filled.put(widget, field);
    expect(firstVerdict(filled.bytes()).changes).toEqual([]);

    const painted = await TestUpdate.of(base);
    const appearance = painted.allocate();
    painted.putStream(
      appearance,
      '<< /Type /XObject /Subtype /Form /BBox [0 0 100 100] >>',
      '0 g 0 0 100 100 re f',
    );
    const unsigned = painted.dict(widget);
    unsigned.set(PDFName.of('AP'), painted.doc.context.obj({ N: PDFRef.of(appearance) }));
    unsigned.set(PDFName.of('Rect'), painted.doc.context.obj([40, 700, 140, 800]));
    painted.put(widget, unsigned);
    expect(firstVerdict(painted.bytes()).problems).toEqual([
      `Revision 3 changes object ${widget} (signature field 'Later': /Rect, /AP)`,
    ]);
  });
});
