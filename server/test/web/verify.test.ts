import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createOpensslPki, type OpensslPki } from '../../../test/support/opensslTsa';
import { ensureDevelopmentCa } from '../../src/dev/developmentCa';
import { localStoreOf } from '../../src/storage/localFileStore';
import { addTrustAnchor } from '../../src/trust/service';
import { TestPki } from '../signing/certificates/testPki';
import { classicPdf, nssDatabase, pdfsigSignatures, pdfsigTrusting } from '../signing/pdf/corpus';
import { appendContentChange, type FixtureSigner, signPdf } from '../signing/signedPdfs';
import { createHarness, type Harness } from '../support/harness';

/**
 * `/xac-thuc` over HTTP: anyone uploads a signed PDF and reads the verification engine's answer
 * in plain words, signature by signature; pdfsig (poppler) reads the same files and must agree.
 * Nothing uploaded is kept (no file in the store, no row written), and hostile input gets a page
 * that says what is wrong, never a 500.
 */

jest.setTimeout(180_000);

let h: Harness;
let pki: TestPki;
let tsa: OpensslPki;
let dir: string;
let nssDir: string;
let signer: FixtureSigner;
let source: string;

const pem = (der: Buffer) =>
  Buffer.from(
    `-----BEGIN CERTIFICATE-----\n${der.toString('base64')}\n-----END CERTIFICATE-----\n`,
  );

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'web-verify-'));
  h = createHarness({ OUTBOUND_ALLOWLIST: '127.0.0.1' });
  h.clock.set(new Date());
  pki = await TestPki.create();
  tsa = createOpensslPki();
  for (const der of [pki.root.der, tsa.rootDer]) {
    await addTrustAnchor(h.deps.db, h.now(), { tenantId: null, certificateFile: pem(der) });
  }
  nssDir = nssDatabase(path.join(dir, 'nss'), [pki.root.certFile]);
  source = path.join(dir, 'contract.pdf');
  fs.writeFileSync(source, await classicPdf());
  const issued = await pki.issue('Nguyen Van An');
  signer = { certificate: issued.der, chain: [pki.intermediate.der], keyFile: issued.keyFile };
  // The service's own development CA exists, as after any development start: what a
  // verification keeps (nothing) is then measured apart from the CA made on first use.
  await ensureDevelopmentCa(h.deps);
});

afterAll(async () => {
  await pki?.close();
  tsa?.remove();
  await h?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  // The OCSP answers and timestamps carry the real time; judge them by it.
  h.clock.set(new Date());
});

let counter = 0;
async function signed(name: string): Promise<string> {
  const file = path.join(dir, `${name}-${++counter}.pdf`);
  await signPdf(source, file, { signer, tempDir: dir, tsa });
  return file;
}

/** Posts the form of the page as a browser does: multipart, one `file` part. */
function upload(
  bytes: Buffer,
  fileName = 'hop-dong-da-ky.pdf',
  app: Harness = h,
  headers: Record<string, string> = {},
): Promise<Response> {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type: 'application/pdf' }), fileName);
  return Promise.resolve(app.app.request('/app/xac-thuc', { method: 'POST', body: form, headers }));
}

/** Every file under the store's root, temp files included. */
function storedFiles(): string[] {
  return fs
    .readdirSync(localStoreOf(h.deps.files).root, { recursive: true, encoding: 'utf8' })
    .filter((name) => fs.statSync(path.join(localStoreOf(h.deps.files).root, name)).isFile());
}

/**
 * Rows written, but for the rate limit's counts (each upload is counted as one request: one
 * change, which raises its window's count by one; the clock stands still, so nothing is pruned).
 * SQLite: every row inserted, changed or deleted through the app's connection since it opened;
 * PostgreSQL (no such counter): the rows of every table.
 */
async function rowsWritten(): Promise<number> {
  if (h.deps.config.databaseUrl !== undefined) {
    let total = 0;
    for (const table of await h.deps.db.introspection.getTables()) {
      if (table.name === 'rate_windows') continue;
      const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(
        table.name,
      )}`.execute(h.deps.db);
      total += Number(rows[0]!.n);
    }
    return total;
  }
  const { rows } = await sql<{ n: number; counted: number }>`select total_changes() as n,
    (select coalesce(sum(count), 0) from rate_windows) as counted`.execute(h.deps.db);
  return rows[0]!.n - rows[0]!.counted;
}

/** The plain text of a page, tags dropped, entities of our renderer decoded. */
function textOf(html: string): string {
  return html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
}

const says = {
  integrityPassed: 'Nội dung được ký còn nguyên vẹn: chữ ký khớp với tài liệu.',
  integrityFailed: 'Chữ ký không khớp với nội dung',
  trusted: 'Chứng thư số do tổ chức chứng thực được tin cậy cấp',
  untrusted: 'Chứng thư số không thuộc tổ chức chứng thực được tin cậy',
  whole: 'Chữ ký bao trùm toàn bộ tệp.',
  partial: 'Chữ ký không bao trùm toàn bộ tệp',
};

/**
 * pdfsig's verdict for each signature and the page's, side by side: where pdfsig answers a
 * question (integrity, trust, coverage) the page says the same.
 */
async function expectAgreement(file: string, page: string): Promise<string[]> {
  const theirs = pdfsigSignatures(await pdfsigTrusting(file, nssDir));
  const cards = page.split('<article class="card verify-signature"').slice(1).map(textOf);
  expect(cards).toHaveLength(theirs.length);
  theirs.forEach((their, i) => {
    const card = cards[i]!;
    if (/Signature is Valid\./.test(their.text)) expect(card).toContain(says.integrityPassed);
    if (/Digest Mismatch\./.test(their.text)) expect(card).toContain(says.integrityFailed);
    if (/Certificate is Trusted\./.test(their.text)) expect(card).toContain(says.trusted);
    if (/Certificate issuer isn't Trusted\./.test(their.text))
      expect(card).toContain(says.untrusted);
    if (their.total) expect(card).toContain(says.whole);
    if (/Not total document signed/.test(their.text)) expect(card).toContain(says.partial);
  });
  return theirs.map((t) => t.text);
}

describe('/xac-thuc', () => {
  it('shows the upload form to anyone, without signing in', async () => {
    const response = await h.request('GET', '/app/xac-thuc');
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('enctype="multipart/form-data"');
    expect(html).toContain('<label for="verify-file">Tệp PDF đã ký</label>');
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  it('says a valid signature is valid, in plain words, as pdfsig does; keeps nothing', async () => {
    const file = await signed('valid');
    const filesBefore = storedFiles();
    const rowsBefore = await rowsWritten();
    const response = await upload(fs.readFileSync(file));
    expect(response.status).toBe(200);
    const html = await response.text();
    const text = textOf(html);
    expect(text).toContain('Tất cả chữ ký trong tệp đều hợp lệ');
    expect(text).toContain('hop-dong-da-ky.pdf');
    expect(text).toContain('Nguyen Van An');
    expect(text).toContain('CN=Test Intermediate CA');
    expect(text).toContain('B-T: có dấu thời gian tin cậy');
    expect(text).toContain('Thời điểm ký được xác nhận bởi dấu thời gian');
    expect(text).toContain('Không có thay đổi nào sau khi ký.');
    // The signing time with its zone.
    expect(html).toMatch(/<time datetime="[^"]+" data-local="datetime">[^<]+GMT\+7<\/time>/);
    const [report] = await expectAgreement(file, html);
    expect(report).toMatch(/Signature is Valid\./);
    expect(report).toMatch(/Certificate is Trusted\./);
    // Nothing kept: no file in the store (temp files included), no row written.
    expect(storedFiles()).toEqual(filesBefore);
    expect(await rowsWritten()).toBe(rowsBefore);
  });

  it('says a tampered file was changed, where pdfsig finds a digest mismatch', async () => {
    const file = await signed('tampered');
    const bytes = fs.readFileSync(file);
    const at = bytes.indexOf('Clause 1.7');
    bytes[at + 7] = '9'.charCodeAt(0);
    fs.writeFileSync(file, bytes);
    const response = await upload(bytes);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(textOf(html)).toContain('Có chữ ký không hợp lệ hoặc tài liệu đã bị thay đổi');
    const [report] = await expectAgreement(file, html);
    expect(report).toMatch(/Digest Mismatch\./);
  });

  it('names the change made after signing, which pdfsig calls "not total document signed"', async () => {
    const file = await signed('changed');
    appendContentChange(file);
    const response = await upload(fs.readFileSync(file));
    const html = await response.text();
    const text = textOf(html);
    expect(text).toContain(
      'Tài liệu đã bị thay đổi sau khi ký theo cách chữ ký này không cho phép.',
    );
    expect(text).toContain('Thay đổi sau khi ký');
    expect(text).toMatch(/Lần cập nhật \d+: /);
    const [report] = await expectAgreement(file, html);
    expect(report).toMatch(/Not total document signed/);
  });

  it('answers in English when asked', async () => {
    const file = await signed('english');
    const form = new FormData();
    form.append('file', new Blob([fs.readFileSync(file)]), 'signed.pdf');
    const response = await h.app.request('/app/xac-thuc', {
      method: 'POST',
      body: form,
      headers: { cookie: 'esign_lang=en' },
    });
    const text = textOf(await response.text());
    expect(text).toContain('Every signature in the file is valid');
    expect(text).toContain('The signed content is intact');
  });

  it('says a file without signatures has none', async () => {
    const response = await upload(fs.readFileSync(source));
    expect(response.status).toBe(200);
    expect(textOf(await response.text())).toContain('Tệp này không có chữ ký số nào.');
  });

  it('answers hostile input with a page that says what is wrong, never a 500, and keeps nothing', async () => {
    const filesBefore = storedFiles();
    const rowsBefore = await rowsWritten();
    const cases: { response: Promise<Response>; status: number; text: string }[] = [
      {
        response: upload(Buffer.from('not a pdf at all, only words')),
        status: 415,
        text: 'không phải là tệp PDF',
      },
      {
        response: upload(Buffer.from('PK\u0003\u0004 a zip'), 'hop-dong.docx'),
        status: 415,
        text: 'không phải là tệp PDF',
      },
      {
        response: upload(Buffer.from('%PDF-1.7\n1 0 obj <</Type/Catalog/Pages 2 0 R\ntrailer')),
        status: 422,
        text: 'Không đọc được tệp PDF này',
      },
      {
        response: upload(Buffer.alloc(0)),
        status: 400,
        text: 'Vui lòng chọn một tệp PDF',
      },
      {
        response: Promise.resolve(
          h.app.request('/app/xac-thuc', {
            method: 'POST',
            body: 'file=x',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
          }),
        ),
        status: 400,
        text: 'Không nhận được tệp',
      },
      {
        response: (() => {
          const form = new FormData();
          form.append('other', new Blob(['x']), 'x.pdf');
          return Promise.resolve(h.app.request('/app/xac-thuc', { method: 'POST', body: form }));
        })(),
        status: 400,
        text: 'Không nhận được tệp',
      },
    ];
    for (const { response, status, text } of cases) {
      const answer = await response;
      const page = textOf(await answer.text());
      expect({ status: answer.status, says: page.includes(text) }).toEqual({ status, says: true });
    }
    expect(storedFiles()).toEqual(filesBefore);
    expect(await rowsWritten()).toBe(rowsBefore);
  });

  it('refuses a body over the upload limit before reading it', async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new Uint8Array(1024));
      },
    });
    const response = await h.app.request('/app/xac-thuc', {
      method: 'POST',
      body,
      headers: {
        'content-type': 'multipart/form-data; boundary=x',
        'content-length': String(60 * 1024 * 1024),
      },
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(textOf(await response.text())).toContain('Tệp lớn hơn 50 MB');
    expect(pulled).toBeLessThanOrEqual(1);
  });

  it('limits uploads per client address', async () => {
    const limited = createHarness({ RATE_LIMIT_UPLOAD: '2' });
    try {
      const bytes = fs.readFileSync(source);
      expect((await upload(bytes, 'a.pdf', limited)).status).toBe(200);
      expect((await upload(bytes, 'a.pdf', limited)).status).toBe(200);
      const third = await upload(bytes, 'a.pdf', limited);
      expect(third.status).toBe(429);
      expect(third.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(textOf(await third.text())).toContain('Bạn đã gửi quá nhiều tệp');
    } finally {
      await limited.close();
    }
  });
});
