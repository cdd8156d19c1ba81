import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { statusOfCode } from '../../../src/http/errorStatuses';
import { EngineError } from '../../../src/pdf/engineError';
import { appendDss, preparePdfSignature } from '../../../src/pdf/signatureUpdates';
import {
  digestByteRange,
  embedSignature,
  type PreparedSignature,
  type PrepareSignatureOptions,
  readDss,
  readSignatures,
  writeSignedCopy,
} from '../../../src/pdf/signing';
import {
  acroFormPdf,
  certifiedNoChangesPdf,
  classicPdf,
  hybridPdf,
  makeSigner,
  objectStreamPdf,
  opensslCms,
  pdfsig,
  pdfsigSignatures,
  qpdf,
  qpdfCheck,
  writeLargePdf,
} from './corpus';

jest.setTimeout(120_000);

let dir: string;
let signer: { key: string; cert: string };
const signingTime = new Date('2026-11-26T04:00:00Z');

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pdf-signing-'));
  signer = makeSigner(dir);
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function write(name: string, bytes: Buffer): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  return file;
}

/** Signs a prepared file for real: openssl's detached CMS over the byte ranges, embedded. */
async function sign(prepared: PreparedSignature): Promise<Buffer> {
  const cms = opensslCms(prepared.path, prepared.byteRange, signer, dir);
  await embedSignature(prepared.path, prepared, cms);
  return cms;
}

function sha256OfRanges(file: string, range: [number, number, number, number]): Buffer {
  const bytes = fs.readFileSync(file);
  return crypto
    .createHash('sha256')
    .update(bytes.subarray(range[0], range[0] + range[1]))
    .update(bytes.subarray(range[2], range[2] + range[3]))
    .digest();
}

async function refusal(promise: Promise<unknown>): Promise<EngineError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof EngineError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

/** Signatures and DSS may change after a signature; anything else is a change of the document. */
const allowedAfterSignature = new Set(['signature', 'timestamp', 'dss', 'dssItem']);

const corpus: [string, () => Promise<string>, 'table' | 'stream' | 'hybrid'][] = [
  ['classic xref table', async () => write('classic.pdf', await classicPdf()), 'table'],
  [
    'xref stream + object streams (pdf-lib)',
    async () => write('objstm.pdf', await objectStreamPdf()),
    'stream',
  ],
  [
    'xref stream + object streams (qpdf)',
    async () => {
      const input = write('qpdf-in.pdf', await acroFormPdf());
      const output = path.join(dir, 'qpdf-objstm.pdf');
      qpdf(['--object-streams=generate'], input, output);
      return output;
    },
    'stream',
  ],
  ['hybrid-reference file', async () => write('hybrid.pdf', hybridPdf()), 'hybrid'],
  [
    'existing AcroForm with filled fields',
    async () => write('acroform.pdf', await acroFormPdf()),
    'table',
  ],
  [
    'linearized file',
    async () => {
      const input = write('lin-in.pdf', await classicPdf(3));
      const output = path.join(dir, 'linearized.pdf');
      qpdf(['--linearize'], input, output);
      return output;
    },
    'table',
  ],
  ['200-page file', async () => write('pages200.pdf', await classicPdf(200)), 'table'],
];

describe('prepare, embed and sign twice: every earlier signature stays valid', () => {
  it.each(corpus)('%s', async (_label, build, xref) => {
    const source = await build();
    const original = fs.readFileSync(source);
    const pageCount = (await PDFDocument.load(original, { ignoreEncryption: true })).getPageCount();

    const first = await preparePdfSignature(source, {
      signingTime,
      signerName: 'Nguyễn Văn Đức',
      reason: 'Đồng ý ký hợp đồng',
      location: 'Hà Nội',
      tempDir: dir,
    });
    const prepared = fs.readFileSync(first.path);
    expect(prepared.subarray(0, original.length).equals(original)).toBe(true);
    expect(first.byteRange[0]).toBe(0);
    expect(first.byteRange[2] + first.byteRange[3]).toBe(prepared.length);
    expect(first.documentDigest.equals(sha256OfRanges(first.path, first.byteRange))).toBe(true);
    expect(prepared.subarray(first.contentsOffset - 1, first.contentsOffset).toString()).toBe('<');
    const firstCms = await sign(first);
    expect(qpdfCheck(first.path).ok).toBe(true);

    const second = await preparePdfSignature(first.path, {
      signingTime: new Date(signingTime.getTime() + 60_000),
      signerName: 'Trần Thị Bình',
      page: pageCount,
      appearance: { rect: [50, 50, 250, 100] },
      tempDir: dir,
    });
    const signedOnce = fs.readFileSync(first.path);
    expect(fs.readFileSync(second.path).subarray(0, signedOnce.length).equals(signedOnce)).toBe(
      true,
    );
    await sign(second);
    const check = qpdfCheck(second.path);
    expect(check.output).toContain('No syntax or stream encoding errors');
    expect(check.ok).toBe(true);

    const report = pdfsigSignatures(pdfsig(second.path));
    expect(report).toHaveLength(2);
    expect(report.map((s) => s.valid)).toEqual([true, true]);
    expect(report.map((s) => s.total)).toEqual([false, true]);
    expect(report[0]!.text).toContain('Not total document signed');

    const read = readSignatures(second.path);
    expect(read.revisions[0]!.xref).toBe(xref);
    // Our update follows the file's kind: a table after a table or a hybrid, a stream after a stream.
    expect(read.revisions[1]!.xref).toBe(xref === 'stream' ? 'stream' : 'table');
    expect(read.signatures.map((s) => s.fieldName)).toEqual(['Signature1', 'Signature2']);
    const [one, two] = read.signatures;
    expect(one!.contents.equals(firstCms)).toBe(true);
    expect(one!.subFilter).toBe('ETSI.CAdES.detached');
    expect(one!.filter).toBe('Adobe.PPKLite');
    expect(one!.signingTime?.toISOString()).toBe(signingTime.toISOString());
    expect(one!.signerName).toBe('Nguyễn Văn Đức');
    expect(one!.reason).toBe('Đồng ý ký hợp đồng');
    expect(one!.location).toBe('Hà Nội');
    expect(two!.signerName).toBe('Trần Thị Bình');
    expect(one!.byteRange).toEqual(first.byteRange);
    expect(read.signatures.map((s) => [s.holeIsContents, s.docMdpPermission])).toEqual([
      [true, undefined],
      [true, undefined],
    ]);
    expect(one!.coversWholeFile).toBe(false);
    expect(two!.coversWholeFile).toBe(true);
    expect(one!.revisionIndex).toBe(read.revisions.length - 2);
    expect(one!.laterRevisions).toHaveLength(1);
    for (const change of one!.laterRevisions.flatMap((r) => r.changes)) {
      expect(allowedAfterSignature.has(change.kind)).toBe(true);
    }
    expect(two!.laterRevisions).toEqual([]);
    expect(read.trailingBytes).toBe(0);
    expect((await digestByteRange(second.path, two!.byteRange)).equals(second.documentDigest)).toBe(
      true,
    );
  });

  it('keeps the existing AcroForm fields and their values', async () => {
    const source = write('form-keep.pdf', await acroFormPdf());
    const prepared = await preparePdfSignature(source, { signingTime, tempDir: dir });
    await sign(prepared);
    const form = (await PDFDocument.load(fs.readFileSync(prepared.path))).getForm();
    expect(form.getFields().map((f) => f.getName())).toEqual(['buyer.name', 'agree', 'Signature1']);
    expect(form.getTextField('buyer.name').getText()).toBe('Nguyen Van A');
    expect(form.getCheckBox('agree').isChecked()).toBe(true);
    const acroForm = form.acroForm.dict;
    expect(acroForm.toString()).toContain('/SigFlags 3');
  });

  it('names the field as asked, and refuses a name already taken', async () => {
    const source = write('named.pdf', await classicPdf());
    const prepared = await preparePdfSignature(source, {
      signingTime,
      fieldName: 'Bên A',
      tempDir: dir,
    });
    await sign(prepared);
    expect(readSignatures(prepared.path).signatures[0]!.fieldName).toBe('Bên A');
    const error = await refusal(
      preparePdfSignature(prepared.path, { signingTime, fieldName: 'Bên A', tempDir: dir }),
    );
    expect([statusOfCode(error.code), error.code]).toEqual([409, 'PDF_FIELD_EXISTS']);
  });
});

describe('the visible signature', () => {
  it('draws the signer name and date in its box; the invisible one draws nothing', async () => {
    const source = write('visible.pdf', await classicPdf());
    const invisible = await preparePdfSignature(source, { signingTime, tempDir: dir });
    await sign(invisible);
    const visible = await preparePdfSignature(invisible.path, {
      signingTime,
      signerName: 'Trần Thị Bình',
      appearance: { rect: [300, 20, 500, 70] },
      tempDir: dir,
    });
    await sign(visible);
    // The box's area in a 72 dpi grey rendering: rows 842-70..842-20, columns 300..500.
    const darkIn = (file: string) => {
      const pgm = execFileSync('pdftoppm', ['-r', '72', '-gray', '-f', '1', '-l', '1', file]);
      const header = /^P5\s+(\d+)\s+(\d+)\s+255\s/.exec(pgm.toString('latin1', 0, 40))!;
      const width = Number(header[1]);
      const pixels = pgm.subarray(header[0].length);
      let dark = 0;
      for (let y = 842 - 70; y < 842 - 20; y++) {
        for (let x = 300; x < 500; x++) if (pixels[y * width + x]! < 128) dark++;
      }
      return dark;
    };
    expect(darkIn(invisible.path)).toBe(0);
    expect(darkIn(visible.path)).toBeGreaterThan(50);
  });
});

describe('the visible signature in Vietnamese', () => {
  const text = 'Ký bởi: Nguyễn Văn Ánh — Hà Nội';

  it('embeds a DejaVu Sans subset: the text reads back exactly, the revision stays small', async () => {
    const source = write('vietnamese.pdf', await classicPdf());
    const first = await preparePdfSignature(source, {
      signingTime,
      signerName: 'Trần Thị Bình',
      tempDir: dir,
    });
    await sign(first);
    const signedSize = fs.statSync(first.path).size;
    // NFD on the way in: the appearance is drawn (and read back) in NFC.
    const visible = await preparePdfSignature(first.path, {
      signingTime,
      appearance: { rect: [50, 20, 450, 60], lines: [text.normalize('NFD')] },
      tempDir: dir,
    });
    await sign(visible);

    // The revision without its /Contents placeholder: a few KB of font, not the 700 KB file.
    const growth = fs.statSync(visible.path).size - signedSize - visible.contentsHexLength;
    expect(growth).toBeLessThan(30 * 1024);
    expect(qpdfCheck(visible.path).ok).toBe(true);
    expect(pdfsigSignatures(pdfsig(visible.path)).map((s) => s.valid)).toEqual([true, true]);
    const [one] = readSignatures(visible.path).signatures;
    for (const change of one!.laterRevisions.flatMap((r) => r.changes)) {
      expect(allowedAfterSignature.has(change.kind)).toBe(true);
    }

    // pdftotext reads page content only: flatten the widget's appearance into the page first.
    const flat = path.join(dir, 'vietnamese-flat.pdf');
    qpdf(['--flatten-annotations=all'], visible.path, flat);
    const boxText = execFileSync(
      'pdftotext',
      ['-x', '50', '-y', String(842 - 60), '-W', '400', '-H', '40', flat, '-'],
      { encoding: 'utf8' },
    );
    expect(boxText.replace(/[\n\f]+$/, '')).toBe(text);

    // pdffonts reads the widget's appearance too: the signed file itself lists the subset.
    const fonts = execFileSync('pdffonts', [visible.path], { encoding: 'utf8' });
    const row = fonts.split('\n').find((line) => /^[A-Z]{6}\+DejaVuSans /.test(line));
    // name, type ("CID TrueType"), encoding, emb, sub, uni.
    expect(row?.split(/\s+/).slice(1, 7)).toEqual([
      'CID',
      'TrueType',
      'Identity-H',
      'yes',
      'yes',
      'yes',
    ]);
  });

  it('wraps long text by glyph widths inside the box; a character without a glyph prints as ?', async () => {
    const source = write('wrapped.pdf', await classicPdf());
    const long = `${text}, ngày 26 tháng 11 năm 2026, theo hợp đồng số HĐ-2026/0042 中`;
    const prepared = await preparePdfSignature(source, {
      signingTime,
      appearance: { rect: [300, 20, 420, 90], lines: [long] },
      tempDir: dir,
    });
    await sign(prepared);
    const flat = path.join(dir, 'wrapped-flat.pdf');
    qpdf(['--flatten-annotations=all'], prepared.path, flat);
    const area = ['-x', '300', '-y', String(842 - 90), '-W', '120', '-H', '70'];
    const lines = execFileSync('pdftotext', [...area, flat, '-'], { encoding: 'utf8' })
      .replace(/[\n\f]+$/, '')
      .split('\n');
    expect(lines.length).toBeGreaterThan(2);
    expect(lines.join(' ')).toBe(long.replace('中', '?'));
    // Every word of the box ends inside it (2 pt padding): none is cut at its edge.
    const bbox = execFileSync('pdftotext', ['-bbox', flat, '-'], { encoding: 'utf8' });
    const rights = [...bbox.matchAll(/xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)"/g)]
      .filter((m) => Number(m[1]) >= 300 && Number(m[2]) >= 842 - 90)
      .map((m) => Number(m[3]));
    expect(Math.max(...rights)).toBeLessThanOrEqual(420 - 2 + 0.5);
  });
});

describe('refusals before anything is written', () => {
  const refusalsDir = () => {
    const target = path.join(dir, `refusals-${crypto.randomUUID()}`);
    fs.mkdirSync(target);
    return target;
  };

  it('options out of their rules: 400 VALIDATION_ERROR naming the option', async () => {
    const tempDir = refusalsDir();
    const source = write('options.pdf', await classicPdf());
    const cases: [Partial<PrepareSignatureOptions>, string][] = [
      [{ fieldName: 'a.b' }, 'fieldName'],
      [{ contentsSize: 0 }, 'contentsSize'],
      [{ page: 0 }, 'page'],
      [{ appearance: { rect: [10, 10, 5, 20] } }, 'appearance.rect'],
      [{ signingTime: new Date(Number.NaN) }, 'signingTime'],
    ];
    for (const [options, field] of cases) {
      const error = await refusal(
        preparePdfSignature(source, { signingTime, tempDir, ...options }),
      );
      expect([statusOfCode(error.code), error.code, error.field]).toEqual([
        400,
        'VALIDATION_ERROR',
        field,
      ]);
    }
    expect(fs.readdirSync(tempDir)).toEqual([]);
  });

  it('a field name used by a parent field: 409 PDF_FIELD_EXISTS', async () => {
    const source = write('parent-name.pdf', await acroFormPdf());
    const error = await refusal(
      preparePdfSignature(source, { signingTime, fieldName: 'buyer', tempDir: dir }),
    );
    expect([statusOfCode(error.code), error.code]).toEqual([409, 'PDF_FIELD_EXISTS']);
  });

  it('a file that is not a PDF: 415 NOT_A_PDF', async () => {
    const tempDir = refusalsDir();
    const source = write('not-a-pdf.txt', Buffer.from('PK\u0003\u0004 this is a zip, not a PDF'));
    const error = await refusal(preparePdfSignature(source, { signingTime, tempDir }));
    expect([statusOfCode(error.code), error.code]).toEqual([415, 'NOT_A_PDF']);
    const empty = write('empty.pdf', Buffer.alloc(0));
    expect((await refusal(preparePdfSignature(empty, { signingTime, tempDir }))).code).toBe(
      'NOT_A_PDF',
    );
    expect(fs.readdirSync(tempDir)).toEqual([]);
  });

  it('an encrypted PDF: 422 PDF_ENCRYPTED', async () => {
    const tempDir = refusalsDir();
    const input = write('plain.pdf', await classicPdf());
    const encrypted = path.join(dir, 'encrypted.pdf');
    qpdf(['--encrypt', 'user', 'owner', '256', '--'], input, encrypted);
    const error = await refusal(preparePdfSignature(encrypted, { signingTime, tempDir }));
    expect([statusOfCode(error.code), error.code]).toEqual([422, 'PDF_ENCRYPTED']);
    expect(fs.readdirSync(tempDir)).toEqual([]);
  });

  it('a PDF that does not parse: 422 PDF_UNREADABLE', async () => {
    const tempDir = refusalsDir();
    const whole = await classicPdf();
    const truncated = write('truncated.pdf', whole.subarray(0, Math.floor(whole.length / 2)));
    const badOffset = write(
      'bad-startxref.pdf',
      Buffer.from(whole.toString('latin1').replace(/startxref\s+\d+/, 'startxref\n12'), 'latin1'),
    );
    for (const file of [truncated, badOffset]) {
      const error = await refusal(preparePdfSignature(file, { signingTime, tempDir }));
      expect([statusOfCode(error.code), error.code]).toEqual([422, 'PDF_UNREADABLE']);
    }
    expect(fs.readdirSync(tempDir)).toEqual([]);
  });

  it('a certification signature with DocMDP /P 1: 422 PDF_CHANGES_NOT_ALLOWED', async () => {
    const tempDir = refusalsDir();
    const source = write('certified.pdf', await certifiedNoChangesPdf());
    const error = await refusal(preparePdfSignature(source, { signingTime, tempDir }));
    expect([statusOfCode(error.code), error.code]).toEqual([422, 'PDF_CHANGES_NOT_ALLOWED']);
    expect(fs.readdirSync(tempDir)).toEqual([]);
  });

  it('a page that does not exist: 422 PDF_PAGE_NOT_FOUND', async () => {
    const tempDir = refusalsDir();
    const source = write('one-page.pdf', await classicPdf());
    const error = await refusal(preparePdfSignature(source, { signingTime, page: 2, tempDir }));
    expect([statusOfCode(error.code), error.code]).toEqual([422, 'PDF_PAGE_NOT_FOUND']);
    expect(fs.readdirSync(tempDir)).toEqual([]);
  });
});

describe('embedSignature', () => {
  it('refuses a CMS larger than the placeholder and leaves the file as it was', async () => {
    const source = write('small-room.pdf', await classicPdf());
    const prepared = await preparePdfSignature(source, {
      signingTime,
      contentsSize: 64,
      tempDir: dir,
    });
    const before = fs.readFileSync(prepared.path);
    const error = await refusal(embedSignature(prepared.path, prepared, Buffer.alloc(65, 1)));
    expect([statusOfCode(error.code), error.code]).toEqual([422, 'PDF_SIGNATURE_TOO_LARGE']);
    expect(fs.readFileSync(prepared.path).equals(before)).toBe(true);
  });

  it('refuses a file whose placeholder is not where the preparation says', async () => {
    const source = write('elsewhere.pdf', await classicPdf());
    const prepared = await preparePdfSignature(source, { signingTime, tempDir: dir });
    const before = fs.readFileSync(prepared.path);
    const moved = { ...prepared, contentsOffset: prepared.contentsOffset + 7 };
    const error = await refusal(embedSignature(prepared.path, moved, Buffer.alloc(16, 1)));
    expect([statusOfCode(error.code), error.code]).toEqual([422, 'PDF_PLACEHOLDER_NOT_FOUND']);
    expect(fs.readFileSync(prepared.path).equals(before)).toBe(true);
  });
});

describe('writeSignedCopy', () => {
  it('writes the signed file in one read: the digest read back, its own SHA-256 and size', async () => {
    const source = write('copy.pdf', await classicPdf());
    const prepared = await preparePdfSignature(source, { signingTime, tempDir: dir });
    const cms = opensslCms(prepared.path, prepared.byteRange, signer, dir);
    const before = fs.readFileSync(prepared.path);
    const target = path.join(dir, 'copy-signed.pdf');
    const copy = await writeSignedCopy(prepared.path, target, prepared, cms);
    expect(fs.readFileSync(prepared.path).equals(before)).toBe(true);
    await embedSignature(prepared.path, prepared, cms);
    const signed = fs.readFileSync(target);
    expect(signed.equals(fs.readFileSync(prepared.path))).toBe(true);
    expect(copy).toEqual({
      documentDigest: prepared.documentDigest,
      sha256: crypto.createHash('sha256').update(signed).digest('hex'),
      size: signed.length,
    });
    expect(pdfsigSignatures(pdfsig(target)).map((s) => s.valid)).toEqual([true]);
  });

  it('refuses a placement whose byte range is not around its placeholder, writing nothing', async () => {
    const source = write('copy-moved.pdf', await classicPdf());
    const prepared = await preparePdfSignature(source, { signingTime, tempDir: dir });
    const [a, b, c, d] = prepared.byteRange;
    const target = path.join(dir, 'copy-moved-signed.pdf');
    const error = await refusal(
      writeSignedCopy(
        prepared.path,
        target,
        { ...prepared, byteRange: [a, b, c + 1, d - 1] },
        Buffer.alloc(16, 1),
      ),
    );
    expect([statusOfCode(error.code), error.code]).toEqual([422, 'PDF_PLACEHOLDER_NOT_FOUND']);
    expect(fs.existsSync(target)).toBe(false);
  });
});

describe('appendDss', () => {
  it('adds a DSS after the signature, merges with an existing one, and the signature stays valid', async () => {
    const source = write('dss.pdf', await objectStreamPdf());
    const prepared = await preparePdfSignature(source, { signingTime, tempDir: dir });
    await sign(prepared);
    const certificate = Buffer.from(
      fs.readFileSync(signer.cert, 'latin1').replace(/-----[^-]+-----|\s/g, ''),
      'base64',
    );
    // Stand-ins for revocation answers: the DSS stores bytes, it does not parse them.
    const ocsp = crypto.randomBytes(300);
    const crl = crypto.randomBytes(200);
    await appendDss(prepared.path, {
      certificates: [certificate, certificate],
      ocspResponses: [ocsp],
      crls: [],
    });
    const secondOcsp = crypto.randomBytes(310);
    await appendDss(prepared.path, {
      certificates: [certificate],
      ocspResponses: [secondOcsp],
      crls: [crl],
    });

    const dss = readDss(prepared.path);
    expect(dss.certificates).toEqual([certificate]);
    expect(dss.ocspResponses).toEqual([ocsp, secondOcsp]);
    expect(dss.crls).toEqual([crl]);
    // Nothing new: no update at all.
    const size = fs.statSync(prepared.path).size;
    await appendDss(prepared.path, {
      certificates: [certificate],
      ocspResponses: [ocsp],
      crls: [],
    });
    expect(fs.statSync(prepared.path).size).toBe(size);

    const report = pdfsigSignatures(pdfsig(prepared.path));
    expect(report.map((s) => s.valid)).toEqual([true]);
    expect(qpdfCheck(prepared.path).ok).toBe(true);

    const read = readSignatures(prepared.path);
    const [signature] = read.signatures;
    expect(signature!.laterRevisions).toHaveLength(2);
    const [firstDss, secondDss] = signature!.laterRevisions;
    // The first update adds /DSS to the catalog and the DSS with its entries.
    expect(firstDss!.changes.filter((c) => /document catalog/.test(c.what))).toEqual([
      expect.objectContaining({ kind: 'dss', what: expect.stringMatching(/: \/DSS\)$/) }),
    ]);
    expect(new Set(firstDss!.changes.map((c) => c.kind))).toEqual(new Set(['dss', 'dssItem']));
    // The second update rewrites the DSS dictionary only; the catalog is untouched.
    expect(secondDss!.changes.some((c) => /document catalog/.test(c.what))).toBe(false);
    expect(new Set(secondDss!.changes.map((c) => c.kind))).toEqual(new Set(['dss', 'dssItem']));
  });
});

describe('a DSS in the signed revision', () => {
  it.each([
    ['classic xref table', () => classicPdf()],
    ['xref stream + object streams', () => objectStreamPdf()],
    ['existing AcroForm', () => acroFormPdf()],
  ])('%s: the new signature covers the DSS and the whole file', async (_label, make) => {
    const first = await preparePdfSignature(write('dss-in-1.pdf', await make()), {
      signingTime,
      tempDir: dir,
    });
    await sign(first);
    const ocsp = crypto.randomBytes(300);
    const crl = crypto.randomBytes(200);
    const second = await preparePdfSignature(first.path, {
      signingTime,
      tempDir: dir,
      dss: { certificates: [], ocspResponses: [ocsp, ocsp], crls: [crl] },
    });
    await sign(second);

    expect(readDss(second.path)).toEqual({ certificates: [], ocspResponses: [ocsp], crls: [crl] });
    const report = pdfsigSignatures(pdfsig(second.path));
    expect(report.map((s) => [s.valid, s.total])).toEqual([
      [true, false],
      [true, true],
    ]);
    expect(qpdfCheck(second.path).ok).toBe(true);
    const [earlier, last] = readSignatures(second.path).signatures;
    expect(last!.coversWholeFile).toBe(true);
    expect(earlier!.laterRevisions).toHaveLength(1);
    expect(earlier!.laterRevisions[0]!.changes.some((c) => c.kind === 'dss')).toBe(true);
    for (const change of earlier!.laterRevisions[0]!.changes) {
      expect(allowedAfterSignature.has(change.kind)).toBe(true);
    }
  });
});

describe('readSignatures and tampering', () => {
  it('a byte changed in a signed range shows as a digest mismatch', async () => {
    const source = write('tamper.pdf', await classicPdf());
    const prepared = await preparePdfSignature(source, { signingTime, tempDir: dir });
    await sign(prepared);
    const bytes = fs.readFileSync(prepared.path);
    // The header's version digit: inside the first range, and the file still parses.
    expect(bytes.subarray(0, 8).toString('latin1')).toBe('%PDF-1.7');
    bytes[7] = '6'.charCodeAt(0);
    fs.writeFileSync(prepared.path, bytes);
    const [signature] = readSignatures(prepared.path).signatures;
    const digest = await digestByteRange(prepared.path, signature!.byteRange);
    expect(digest.equals(prepared.documentDigest)).toBe(false);
    expect(pdfsigSignatures(pdfsig(prepared.path))[0]!.valid).toBe(false);
  });

  it('bytes appended after the last signature are not part of any revision', async () => {
    const source = write('appended.pdf', await classicPdf());
    const prepared = await preparePdfSignature(source, { signingTime, tempDir: dir });
    await sign(prepared);
    fs.appendFileSync(prepared.path, 'trailing garbage\n');
    const read = readSignatures(prepared.path);
    expect(read.trailingBytes).toBe('trailing garbage\n'.length);
    expect(read.signatures[0]!.coversWholeFile).toBe(false);
    expect(read.signatures[0]!.laterRevisions).toEqual([]);
  });
});

describe('a 50 MB file', () => {
  it('is prepared by streaming: the digest matches and memory does not grow with the file', async () => {
    const file = path.join(dir, 'large.pdf');
    writeLargePdf(file, 50);

    const rssBefore = process.memoryUsage().rss;
    const prepared = await preparePdfSignature(file, { signingTime, tempDir: dir });
    const growth = process.memoryUsage().rss - rssBefore;
    expect(growth).toBeLessThan(32 * 1024 * 1024);
    expect(
      (await digestByteRange(prepared.path, prepared.byteRange)).equals(prepared.documentDigest),
    ).toBe(true);
    const whole = crypto.createHash('sha256');
    for await (const chunk of fs.createReadStream(prepared.path)) whole.update(chunk as Buffer);
    expect([prepared.sha256, prepared.size]).toEqual([
      whole.digest('hex'),
      fs.statSync(prepared.path).size,
    ]);
    await sign(prepared);
    expect(pdfsigSignatures(pdfsig(prepared.path)).map((s) => s.valid)).toEqual([true]);
    const read = readSignatures(prepared.path);
    expect(read.signatures[0]!.coversWholeFile).toBe(true);
    fs.rmSync(prepared.path);
    fs.rmSync(file);
  });
});

describe('malformed files', () => {
  it('every corruption of the structure gives a prepared file or a 4xx, never another error', async () => {
    const sources = [await objectStreamPdf(), await acroFormPdf(), hybridPdf()];
    const tempDir = path.join(dir, 'fuzz');
    fs.mkdirSync(tempDir);
    let seed = 8;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const outcomes = { prepared: 0, refused: 0 };
    for (let i = 0; i < 120; i++) {
      const bytes = Buffer.from(sources[i % sources.length]!);
      // Mostly the tail (xref, trailer, object streams' neighbours), sometimes anywhere.
      for (let k = 0; k < 1 + random(4); k++) {
        const at =
          random(3) === 0
            ? random(bytes.length)
            : bytes.length - 1 - random(Math.min(600, bytes.length));
        bytes[at] = random(3) === 0 ? random(256) : '0123456789 /<>[]()R'.charCodeAt(random(19));
      }
      const file = write('fuzz.pdf', bytes);
      try {
        const prepared = await preparePdfSignature(file, {
          signingTime,
          tempDir,
          contentsSize: 256,
        });
        readSignatures(prepared.path);
        fs.rmSync(prepared.path);
        outcomes.prepared++;
      } catch (error) {
        if (!(error instanceof EngineError) || statusOfCode(error.code) >= 500) throw error;
        outcomes.refused++;
      }
    }
    expect(outcomes.refused).toBeGreaterThan(0);
    expect(fs.readdirSync(tempDir)).toEqual([]);
  });
});

describe('digestByteRange', () => {
  it('refuses a byte range that reaches past the end of the file', async () => {
    const source = write('short.pdf', await classicPdf());
    const prepared = await preparePdfSignature(source, { signingTime, tempDir: dir });
    const [a, b, c, d] = prepared.byteRange;
    const error = await refusal(digestByteRange(prepared.path, [a, b, c, d + 1]));
    expect([statusOfCode(error.code), error.code]).toEqual([422, 'PDF_UNREADABLE']);
  });
});

describe('the unsigned hole', () => {
  it('is reported when it holds more than the /Contents string', async () => {
    const source = write('hole.pdf', await classicPdf());
    const prepared = await preparePdfSignature(source, { signingTime, tempDir: dir });
    await sign(prepared);
    const [a, b, c, d] = prepared.byteRange;
    const bytes = fs.readFileSync(prepared.path);
    const text = bytes.toString('latin1');
    const original = `/ByteRange [${[a, b, c, d].join(' ')}`;
    // The same width: the first range ends 10 bytes earlier, leaving 10 more bytes unsigned.
    const widened = `/ByteRange [${[a, b - 10, c, d].join(' ')}`.padEnd(original.length, ' ');
    fs.writeFileSync(prepared.path, Buffer.from(text.replace(original, widened), 'latin1'));
    const [signature] = readSignatures(prepared.path).signatures;
    expect(signature!.byteRange).toEqual([a, b - 10, c, d]);
    expect(signature!.holeIsContents).toBe(false);
  });
});
