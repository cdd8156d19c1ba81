import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFRef, PDFString, StandardFonts } from 'pdf-lib';
import { developmentCa } from '../../../src/dev/developmentCa';
import { addTrustAnchor } from '../../../src/trust/service';
import { dataOf, developmentTsa, openSessionWorld, type SessionWorld } from '../../sessions/world';
import { firstByteRange, TestUpdate } from '../../support/pdfUpdate';
import { type Issued, TestPki } from '../certificates/testPki';
import { nssDatabase, opensslCms, pdfsigSignatures } from '../pdf/corpus';

/**
 * The attack corpus of issue 15, met through the API as a partner meets it: a contract signed by
 * the service (otp_sms, the service's seal key) is downloaded, changed by the tests' own
 * incremental writer (support/pdfUpdate.ts, not the engine's), uploaded as a new contract, signed
 * once more, then `GET /api/signing/verify/{id}`: every attack is reported not valid with the
 * changed object named; every control is valid. pdfsig (poppler) reads the same files; where it
 * says valid and we do not, the table says why.
 */

jest.setTimeout(900_000);

let world: SessionWorld;
let pki: TestPki;
let leaf: Issued;
let nssDir: string;
let dir: string;
/** The signed contract every attack starts from. */
let base: Buffer;
/** Object numbers of the signed contract that the attacks touch. */
let o: {
  catalog: number;
  acroForm: number;
  page: number;
  contents: number;
  font: number;
  fontName: string;
  field: number;
  widget: number;
  hidden: number;
};

const signer = {
  name: 'Nguyễn Văn Ánh',
  email: 'anh@partner.example',
  phone: '0912345678',
  order: 1,
};

interface Verified {
  isValid: boolean;
  signatures: {
    fieldName: string;
    isValid: boolean;
    integrityCheck: string;
    certificateStatus: string;
    modifiedAfterSigning: string;
    problems: string[];
    changes: { revision: number; object: string; what: string }[];
  }[];
}

/** Uploads `bytes` as a contract of one signer and signs it by otp_sms; answers its id. */
async function uploadAndSign(bytes: Buffer, name: string): Promise<string> {
  const id = await world.sentContract([signer], {
    file: { name: `${name}.pdf`, bytes },
    fields: { acceptInvalidSignatures: 'true' },
  });
  const { sessionId } = await dataOf<{ sessionId: string }>(
    await world.initiate(id, signer.email, 'otp_sms'),
  );
  expect((await world.step(sessionId, 'send-otp')).status).toBe(200);
  await world.deliver();
  const confirmed = await world.step(sessionId, 'confirm', { otp: world.otpFor(signer.phone) });
  if (confirmed.status !== 200) {
    throw new Error(`${name}: confirm ${confirmed.status} ${await confirmed.text()}`);
  }
  return id;
}

const verify = async (id: string) =>
  dataOf<Verified>(await world.request('GET', `/api/signing/verify/${id}`, world.acme.orgKey));

/** pdfsig with an NSS database trusting the development CA and the test PKI (never blocking). */
function pdfsigOf(file: string): Promise<ReturnType<typeof pdfsigSignatures>> {
  return new Promise((resolve) => {
    execFile('pdfsig', ['-nssdir', `sql:${nssDir}`, file], (_error, stdout, stderr) =>
      resolve(pdfsigSignatures(`${stdout}${stderr}`)),
    );
  });
}

/** The source contract: text, a filled text field, and a form XObject nothing refers to. */
async function sourcePdf(): Promise<{ bytes: Buffer; hidden: number }> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([595, 842]);
  page.drawText('Clause 1: the buyer pays 1,000,000 VND.', { x: 50, y: 780, size: 14, font });
  page.drawText('Clause 2: delivery within 30 days.', { x: 50, y: 750, size: 14, font });
  const field = doc.getForm().createTextField('buyer');
  field.setText('Nguyen Van A');
  field.addToPage(page, { x: 50, y: 650, width: 200, height: 24, font });
  const plain = Buffer.from(await doc.save({ useObjectStreams: false }));
  // The shadow: planted before anyone signs, referenced by nothing.
  const planted = await TestUpdate.of(plain);
  const hidden = planted.allocate();
  planted.putStream(
    hidden,
    '<< /Type /XObject /Subtype /Form /BBox [0 0 515 40] /Resources << >> >>',
    '1 0 0 rg 0 0 515 40 re f',
  );
  return { bytes: planted.bytes(), hidden };
}

const ref = (num: number) => PDFRef.of(num);
const name = (value: string) => PDFName.of(value);

/** Appends `item` to the array `key` of dictionary `num` (direct or not) in the update. */
function append(update: TestUpdate, num: number, key: string, item: number): void {
  const holder = update.dict(num);
  const value = holder.get(name(key));
  if (value instanceof PDFRef) {
    const array = update.lookup(value.objectNumber) as PDFArray;
    array.push(ref(item));
    update.put(value.objectNumber, array);
    return;
  }
  const array = value instanceof PDFArray ? value : update.doc.context.obj([]);
  array.push(ref(item));
  holder.set(name(key), array);
  update.put(num, holder);
}

/** A page-sized white box over clause 1 (what an overlay shows). */
function whiteBox(update: TestUpdate): number {
  const ap = update.allocate();
  update.putStream(
    ap,
    '<< /Type /XObject /Subtype /Form /BBox [0 0 515 40] /Resources << >> >>',
    '1 1 1 rg 0 0 515 40 re f',
  );
  return ap;
}

/** The page's content replaced: clause 1 says something else and a red bar is drawn. */
function replaceContents(update: TestUpdate): void {
  update.putStream(
    o.contents,
    '<< >>',
    `1 0 0 rg 40 700 515 20 re f 0 g BT /${o.fontName} 14 Tf 50 780 Td (Clause 1: the buyer pays nothing.) Tj ET`,
  );
}

/** A new /DSS (with `entries`, PDF syntax) in the catalog. */
function addDss(update: TestUpdate, entries: string): number {
  const dss = update.allocate();
  update.put(dss, `<< /Type /DSS ${entries} >>`);
  const catalog = update.dict(o.catalog);
  catalog.set(name('DSS'), ref(dss));
  update.put(o.catalog, catalog);
  return dss;
}

/** A signature field with a widget on page 1, in the form and the page's annotations. */
function addSignatureField(
  update: TestUpdate,
  fieldName: string,
  extra: { value?: number; rect?: string; appearance?: number },
): number {
  const widget = update.allocate();
  update.put(
    widget,
    `<< /Type /Annot /Subtype /Widget /FT /Sig /T (${fieldName}) /F 4 /P ${o.page} 0 R /Rect ${extra.rect ?? '[0 0 0 0]'}${extra.value ? ` /V ${extra.value} 0 R` : ''}${extra.appearance ? ` /AP << /N ${extra.appearance} 0 R >>` : ''} >>`,
  );
  append(update, o.acroForm, 'Fields', widget);
  append(update, o.page, 'Annots', widget);
  return widget;
}

const covering = '[40 770 555 810]';

beforeAll(async () => {
  world = await openSessionWorld({ OUTBOUND_ALLOWLIST: '127.0.0.1' });
  dir = path.join(world.h.dataDir, 'attacks');
  fs.mkdirSync(dir, { recursive: true });
  pki = await TestPki.create();
  leaf = await pki.issue('Foreign Signer');
  await addTrustAnchor(world.h.deps.db, world.h.now(), {
    tenantId: null,
    certificateFile: fs.readFileSync(pki.root.certFile),
  });
  const ca = await developmentCa(world.h.deps);
  const caFile = path.join(dir, 'dev-ca.pem');
  fs.writeFileSync(caFile, ca.certificatePem);
  nssDir = nssDatabase(path.join(dir, 'nss'), [caFile, pki.root.certFile]);

  const source = await sourcePdf();
  const id = await uploadAndSign(source.bytes, 'source');
  base = fs.readFileSync(await world.signedFile(id, 'base.pdf'));
  const update = await TestUpdate.of(base);
  const page = update.dict(update.pageNumber());
  const contents = page.get(name('Contents'));
  const fonts = update.doc.getPages()[0]!.node.Resources()!.lookup(name('Font'), PDFDict);
  const [fontName, fontRef] = fonts.entries()[0]!;
  const annots = page.lookup(name('Annots'), PDFArray);
  o = {
    catalog: update.catalogNumber(),
    acroForm: update.refIn(update.dict(update.catalogNumber()), 'AcroForm'),
    page: update.pageNumber(),
    contents: (contents instanceof PDFArray ? (contents.get(0) as PDFRef) : (contents as PDFRef))
      .objectNumber,
    font: (fontRef as PDFRef).objectNumber,
    fontName: fontName.decodeText(),
    field: update.doc.getForm().getTextField('buyer').ref.objectNumber,
    widget: (annots.get(0) as PDFRef).objectNumber,
    hidden: source.hidden,
  };
});

afterAll(async () => {
  await pki?.close();
  await world?.close();
});

interface Case {
  name: string;
  build: () => Promise<Buffer>;
  /** What the first (the service's) signature must say; a control: nothing (all valid). */
  expectFirst?: (signature: Verified['signatures'][number], all: Verified) => void;
  /** pdfsig's verdict on the first signature ("Signature is Valid."), and why ours differs. */
  pdfsigFirstValid: boolean;
  why?: string;
}

const changed = (object: number, what: RegExp) => (signature: Verified['signatures'][number]) => {
  expect(signature).toMatchObject({ isValid: false, modifiedAfterSigning: 'disallowed' });
  expect(signature.changes).toContainEqual(
    expect.objectContaining({ object: `${object} 0 R`, what: expect.stringMatching(what) }),
  );
  // The same change, in words, among the problems.
  expect(signature.problems.join('\n')).toMatch(what);
};

const noAnalysis = 'pdfsig checks each byte range, not what later incremental updates changed';

const attacks: Case[] = [
  {
    name: 'ISA: the page content stream replaced',
    build: async () => {
      const update = await TestUpdate.of(base);
      replaceContents(update);
      return update.bytes();
    },
    expectFirst: (s) =>
      changed(o.contents, /changes object \d+ \(the content stream of page 1\)/)(s),
    pdfsigFirstValid: true,
    why: noAnalysis,
  },
  {
    name: 'ISA: the replaced content stream listed under a new /DSS /CRLs',
    build: async () => {
      const update = await TestUpdate.of(base);
      replaceContents(update);
      addDss(update, `/CRLs [${o.contents} 0 R]`);
      return update.bytes();
    },
    expectFirst: (s) => {
      changed(o.contents, /changes object \d+ \(the content stream of page 1\)/)(s);
      changed(o.contents, /adds to \/DSS object \d+, which existed before/)(s);
    },
    pdfsigFirstValid: true,
    why: noAnalysis,
  },
  {
    name: 'ISA: the replaced content stream listed as a /DSS /VRI entry',
    build: async () => {
      const update = await TestUpdate.of(base);
      replaceContents(update);
      addDss(update, `/VRI << /${'A'.repeat(40)} ${o.contents} 0 R >>`);
      return update.bytes();
    },
    expectFirst: (s) => {
      changed(o.contents, /changes object \d+ \(the content stream of page 1\)/)(s);
      changed(o.contents, /adds to \/DSS object \d+, which existed before/)(s);
    },
    pdfsigFirstValid: true,
    why: noAnalysis,
  },
  {
    name: 'an unsigned /FT /Sig field whose appearance covers clause 1',
    build: async () => {
      const update = await TestUpdate.of(base);
      addSignatureField(update, 'Approval', { rect: covering, appearance: whiteBox(update) });
      return update.bytes();
    },
    expectFirst: (s) => {
      const widget = s.changes.find((c) => /unsigned signature field 'Approval'/.test(c.what));
      expect(widget?.what).toMatch(
        /adds an unsigned signature field 'Approval' with a visible appearance on page 1/,
      );
      changed(Number.parseInt(widget!.object, 10), /unsigned signature field/)(s);
    },
    pdfsigFirstValid: true,
    why: noAnalysis,
  },
  {
    name: 'a plain annotation (/Square) covering clause 1',
    build: async () => {
      const update = await TestUpdate.of(base);
      const annotation = update.allocate();
      update.put(
        annotation,
        `<< /Type /Annot /Subtype /Square /Rect ${covering} /C [1 1 1] /IC [1 1 1] /F 4 /AP << /N ${whiteBox(update)} 0 R >> >>`,
      );
      append(update, o.page, 'Annots', annotation);
      return update.bytes();
    },
    expectFirst: (s) => {
      const added = s.changes.find((c) => /adds an annotation/.test(c.what));
      expect(added?.what).toBe('adds an annotation (/Square) on page 1');
      expect(s.isValid).toBe(false);
    },
    pdfsigFirstValid: true,
    why: noAnalysis,
  },
  {
    name: 'shadow hide: an object planted unreferenced before signing shown by a new field',
    build: async () => {
      const update = await TestUpdate.of(base);
      const value = update.allocate();
      update.put(
        value,
        '<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /ETSI.CAdES.detached /ByteRange [0 10 20 30] /Contents <3000> >>',
      );
      addSignatureField(update, 'Seal', { value, rect: covering, appearance: o.hidden });
      return update.bytes();
    },
    expectFirst: (s) =>
      changed(
        o.hidden,
        /references object \d+, which existed unreferenced in the signed revision \(hidden object\)/,
      )(s),
    pdfsigFirstValid: true,
    why: noAnalysis,
  },
  {
    name: 'shadow replace: the font of page 1 replaced (1 drawn as 9)',
    build: async () => {
      const update = await TestUpdate.of(base);
      update.put(
        o.font,
        '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding << /Type /Encoding /BaseEncoding /WinAnsiEncoding /Differences [49 /nine] >> >>',
      );
      return update.bytes();
    },
    expectFirst: (s) => changed(o.font, /changes object \d+ \(the font \/.+ of page 1\)/)(s),
    pdfsigFirstValid: true,
    why: noAnalysis,
  },
  {
    name: 'a form value changed without a DocMDP permission',
    build: async () => {
      const update = await TestUpdate.of(base);
      const field = update.dict(o.field);
      field.set(name('V'), PDFString.of('Tran Thi B'));
      update.put(o.field, field);
      const widget = update.dict(o.widget);
      widget.set(name('AP'), update.doc.context.obj({ N: ref(whiteBox(update)) }));
      update.put(o.widget, widget);
      return update.bytes();
    },
    expectFirst: (s) => changed(o.field, /changes the value of form field 'buyer'/)(s),
    pdfsigFirstValid: true,
    why: noAnalysis,
  },
  {
    name: 'USF: a signature without /ByteRange added with a content change',
    build: async () => {
      const update = await TestUpdate.of(base);
      const value = update.allocate();
      update.put(
        value,
        '<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /ETSI.CAdES.detached /Contents <3000> >>',
      );
      addSignatureField(update, 'Forged', { value });
      replaceContents(update);
      return update.bytes();
    },
    expectFirst: (s, all) => {
      changed(o.contents, /the content stream of page 1/)(s);
      const forged = all.signatures.find((x) => x.fieldName === 'Forged');
      expect(forged).toMatchObject({ isValid: false, integrityCheck: 'failed' });
      expect(forged!.problems.join('\n')).toMatch(/no usable \/ByteRange/);
    },
    pdfsigFirstValid: true,
    why: noAnalysis,
  },
  {
    name: 'SWA: bytes added inside the unsigned /Contents hole',
    build: async () => {
      const bytes = Buffer.from(base);
      const [, b, c] = firstByteRange(bytes);
      const hole = bytes.toString('latin1', b, c);
      // The DER's own length (30 82 LL LL): what follows it is padding.
      const derHex = hole.slice(1, 1 + 2 * (4 + Number.parseInt(hole.slice(5, 9), 16)));
      const injected = `<${derHex}> /Injected (2 0 obj << /Type /Catalog >> endobj) /Pad <`;
      const padding = c - b - injected.length - 1;
      bytes.write(`${injected}${'0'.repeat(padding)}>`, b, 'latin1');
      return bytes;
    },
    expectFirst: (s) => {
      expect(s).toMatchObject({ isValid: false, integrityCheck: 'failed' });
      expect(s.problems.join('\n')).toMatch(/unsigned gap of the byte range is not exactly/);
    },
    pdfsigFirstValid: true,
    why: 'pdfsig checks the digest of the byte ranges, not what the unsigned hole holds',
  },
  {
    name: 'a /DSS /Certs entry that is not a certificate',
    build: async () => {
      const update = await TestUpdate.of(base);
      const item = update.allocate();
      update.putStream(item, '<< >>', 'this is not a certificate');
      addDss(update, `/Certs [${item} 0 R]`);
      return update.bytes();
    },
    expectFirst: (s, all) => {
      const item = s.changes.find((c) => /not a certificate/.test(c.what));
      expect(item?.what).toMatch(/adds to \/DSS object \d+, which is not a certificate/);
      expect(s.isValid).toBe(false);
      // Chain building skips it: the service's fresh signature is valid.
      expect(all.signatures.at(-1)).toMatchObject({ isValid: true, certificateStatus: 'valid' });
    },
    pdfsigFirstValid: true,
    why: 'pdfsig does not read the DSS',
  },
  {
    name: '/Root replaced by a new catalog with another page',
    build: async () => {
      const update = await TestUpdate.of(base);
      const [catalog, pages, page, contents] = [1, 2, 3, 4].map(() => update.allocate()) as [
        number,
        number,
        number,
        number,
      ];
      update.putStream(
        contents,
        '<< >>',
        `BT /${o.fontName} 14 Tf 50 780 Td (Clause 1: void.) Tj ET`,
      );
      const newPage = update.dict(o.page);
      newPage.set(name('Contents'), ref(contents));
      newPage.set(name('Parent'), ref(pages));
      update.put(page, newPage);
      update.put(pages, `<< /Type /Pages /Kids [${page} 0 R] /Count 1 >>`);
      const newCatalog = update.dict(o.catalog);
      newCatalog.set(name('Pages'), ref(pages));
      update.put(catalog, newCatalog);
      update.setRoot(catalog);
      return update.bytes();
    },
    expectFirst: (s) => {
      expect(s).toMatchObject({ isValid: false, modifiedAfterSigning: 'disallowed' });
      expect(s.changes).toContainEqual(
        expect.objectContaining({
          object: 'trailer',
          what: expect.stringMatching(
            new RegExp(`replaces the document catalog \\(object ${o.catalog}\\) with object \\d+`),
          ),
        }),
      );
    },
    pdfsigFirstValid: true,
    why: noAnalysis,
  },
  {
    name: 'the content stream freed',
    build: async () => {
      const update = await TestUpdate.of(base);
      update.free(o.contents);
      return update.bytes();
    },
    expectFirst: (s) => changed(o.contents, /frees object \d+/)(s),
    pdfsigFirstValid: true,
    why: noAnalysis,
  },
];

const placeholder = '/ByteRange [0 0000000000 0000000000 0000000000]';
const contentsHex = 32768;

/**
 * A new signature field (invisible widget) whose value `dict` (PDF syntax, without /ByteRange and
 * /Contents) gets a placeholder; answers the bytes with the byte range filled in (the /Contents
 * hex digits start at `range[1] + 1`).
 */
async function withPlaceholder(
  from: Buffer,
  fieldName: string,
  dict: string,
): Promise<{ bytes: Buffer; range: [number, number, number, number] }> {
  const update = await TestUpdate.of(from);
  const value = update.allocate();
  update.put(value, `<< ${dict} ${placeholder} /Contents <${'0'.repeat(contentsHex)}> >>`);
  const appearance = update.allocate();
  update.putStream(appearance, '<< /Type /XObject /Subtype /Form /BBox [0 0 0 0] >>', '');
  addSignatureField(update, fieldName, { value, appearance });
  const bytes = update.bytes();
  const text = bytes.toString('latin1');
  const at = text.lastIndexOf(placeholder);
  const b = text.indexOf('/Contents <', at) + '/Contents '.length;
  const c = b + contentsHex + 2;
  const range: [number, number, number, number] = [0, b, c, bytes.length - c];
  const written = `/ByteRange [${range.map((n) => String(n).padStart(10, '0')).join(' ')}]`;
  bytes.write(written.replace('[0000000000', '[0'), at, 'latin1');
  return { bytes, range };
}

const signedContent = (bytes: Buffer, [a, b, c, d]: [number, number, number, number]) =>
  Buffer.concat([bytes.subarray(a, a + b), bytes.subarray(c, c + d)]);

/** What the service's B-LTA step writes: a DSS update, then a document timestamp (RFC 3161). */
async function documentTimestamp(): Promise<Buffer> {
  const { bytes, range } = await withPlaceholder(
    await dssOnly(),
    'DocumentTimestamp',
    '/Type /DocTimeStamp /Filter /Adobe.PPKLite /SubFilter /ETSI.RFC3161',
  );
  const tsa = developmentTsa(world, 'http://localhost/api/dev/tsa');
  try {
    const token = await tsa.stamp(signedContent(bytes, range));
    bytes.write(token.toString('hex').toUpperCase(), range[1] + 1, 'latin1');
  } finally {
    tsa.remove();
  }
  return bytes;
}

/** A further signature made by another tool (openssl cms), with the tests' own writer. */
async function foreignSignature(): Promise<Buffer> {
  const { bytes, range } = await withPlaceholder(
    base,
    'Foreign',
    '/Type /Sig /Filter /Adobe.PPKLite /SubFilter /ETSI.CAdES.detached /M (D:20261127000000Z)',
  );
  const b = range[1];
  const file = path.join(dir, 'foreign-unsigned.pdf');
  fs.writeFileSync(file, bytes);
  const chain = path.join(dir, 'chain.pem');
  fs.writeFileSync(chain, pki.intermediate.pem);
  const cms = opensslCms(file, range, { key: leaf.keyFile, cert: leaf.certFile }, dir, {
    extraCertificates: chain,
    cades: true,
  });
  bytes.write(cms.toString('hex').toUpperCase(), b + 1, 'latin1');
  return bytes;
}

/** Real validation material: certificates, an OCSP answer and a CRL of the test PKI. */
async function dssOnly(): Promise<Buffer> {
  const request = path.join(dir, 'ocsp-request.der');
  await new Promise<void>((resolve, reject) =>
    execFile(
      'openssl',
      [
        'ocsp',
        '-issuer',
        pki.intermediate.certFile,
        '-cert',
        leaf.certFile,
        '-reqout',
        request,
        '-no_nonce',
      ],
      (error) => (error ? reject(error) : resolve()),
    ),
  );
  const answer = await fetch(pki.url('/ocsp'), {
    method: 'POST',
    headers: { 'content-type': 'application/ocsp-request' },
    body: fs.readFileSync(request),
  });
  const ocsp = Buffer.from(await answer.arrayBuffer());
  const crl = fs.readFileSync(path.join(pki.dir, 'int.crl.der'));
  const update = await TestUpdate.of(base);
  const items = [pki.root.der, pki.intermediate.der, ocsp, crl].map((data, i) => {
    const num = update.allocate();
    if (i === 3) update.putStream(num, '<< /Filter /FlateDecode >>', zlib.deflateSync(data));
    else update.putStream(num, '<< >>', data);
    return num;
  });
  const [root, intermediate, ocspItem, crlItem] = items;
  addDss(
    update,
    `/Certs [${root} 0 R ${intermediate} 0 R] /OCSPs [${ocspItem} 0 R] /CRLs [${crlItem} 0 R]`,
  );
  return update.bytes();
}

/** The page dictionary written again with its keys in reverse order and numbers as reals. */
async function reserialized(): Promise<Buffer> {
  const update = await TestUpdate.of(base);
  const page = update.dict(o.page);
  const entries = page
    .entries()
    .reverse()
    .map(([key, value]) => `${key.toString()}   ${value.toString()}`)
    .join('\r\n');
  update.put(o.page, `<<\r\n${entries.replace('595 842', '595.0 842.00')}\r\n>>`);
  return update.bytes();
}

// Signatures listed: the control's own, plus the document timestamps of the two completions
// (the base contract's and the re-signed one's archive revisions, B-LTA).
const controls: { name: string; build: () => Promise<Buffer>; signatures: number }[] = [
  { name: 'untouched', build: async () => base, signatures: 4 },
  {
    name: 'a further signature by another tool (openssl cms)',
    build: foreignSignature,
    signatures: 5,
  },
  { name: 'a DSS-only update (certificates, OCSP, CRL)', build: dssOnly, signatures: 4 },
  {
    name: 'a DSS update then a document timestamp (the B-LTA step)',
    build: documentTimestamp,
    signatures: 5,
  },
  { name: 'the page object re-serialized (same value)', build: reserialized, signatures: 4 },
  {
    name: 'bytes after %%EOF',
    build: async () =>
      Buffer.concat([base, Buffer.from('% bytes after %%EOF that no revision holds\n')]),
    signatures: 4,
  },
];

describe('the attack corpus, uploaded, signed once more, verified through the API', () => {
  it.each(attacks.map((attack) => [attack.name, attack] as const))(
    '%s: not valid, the changed object named',
    async (label, attack) => {
      const bytes = await attack.build();
      const id = await uploadAndSign(bytes, label.replace(/\W+/g, '-'));
      const result = await verify(id);
      expect(result.isValid).toBe(false);
      // The service's first signature (a forged one may sort before it by its byte range).
      attack.expectFirst!(result.signatures.find((s) => s.fieldName === 'Signature1')!, result);
      // The service's own signature, over everything before it, is itself intact; only the
      // archive revision (DSS and document timestamp, B-LTA) follows it.
      expect(result.signatures.find((s) => s.fieldName === 'Signature2')).toMatchObject({
        isValid: true,
        integrityCheck: 'passed',
        modifiedAfterSigning: 'allowed',
        level: 'B-LTA',
      });
      expect(result.signatures.at(-1)).toMatchObject({
        fieldName: 'DocumentTimestamp2',
        isValid: true,
        modifiedAfterSigning: 'none',
      });
      const file = await world.signedFile(id, `${label.replace(/\W+/g, '-')}.pdf`);
      const theirs = await pdfsigOf(file);
      // Where pdfsig calls the first signature valid and we do not: `attack.why`.
      expect({ attack: label, pdfsigValid: theirs[0]?.valid }).toEqual({
        attack: label,
        pdfsigValid: attack.pdfsigFirstValid,
      });
    },
  );

  it.each(controls.map((control) => [control.name, control] as const))(
    'control, %s: every signature valid',
    async (label, control) => {
      const id = await uploadAndSign(await control.build(), label.replace(/\W+/g, '-'));
      const result = await verify(id);
      expect(result.signatures).toHaveLength(control.signatures);
      for (const signature of result.signatures) {
        expect({
          field: signature.fieldName,
          problems: signature.problems,
          changes: signature.changes,
        }).toEqual({
          field: signature.fieldName,
          problems: expect.any(Array),
          changes: [],
        });
        expect(signature).toMatchObject({ isValid: true });
      }
      expect(result.isValid).toBe(true);
      const file = await world.signedFile(id, `${label.replace(/\W+/g, '-')}.pdf`);
      const theirs = await pdfsigOf(file);
      // pdfsig (poppler 22) shows a document timestamp but does not check it ("Unable to
      // validate this type of signature": "Signature has not yet been verified"); we do.
      expect(theirs.map((s) => s.valid)).toEqual(
        result.signatures.map((s) => !s.fieldName.startsWith('DocumentTimestamp')),
      );
      for (const their of theirs.filter((t) => /Field Name: DocumentTimestamp/.test(t.text))) {
        expect(their.text).toMatch(/Signature has not yet been verified/);
      }
    },
  );
});
