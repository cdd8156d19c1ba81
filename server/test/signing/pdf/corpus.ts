import { execFile, execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { PDFDocument, PDFName, StandardFonts } from 'pdf-lib';

/**
 * The PDFs the signing tests run on, built at run time: pdf-lib for the base files, qpdf for
 * the variants pdf-lib cannot write (object streams from qpdf, linearized, encrypted), and a
 * hand-written hybrid-reference file (no tool here writes one).
 */

export async function classicPdf(pages = 1): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < pages; i++) {
    const page = doc.addPage([595, 842]);
    page.drawText(`Hợp đồng page ${i + 1}`.replace(/[^\x20-\x7e]/g, '?'), {
      x: 50,
      y: 780,
      size: 14,
      font,
    });
    for (let line = 0; line < 40; line++) {
      page.drawText(`Clause ${i + 1}.${line}: the parties agree to the terms set out herein.`, {
        x: 50,
        y: 740 - line * 16,
        size: 10,
        font,
      });
    }
  }
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

/** pdf-lib's default save: an xref stream and object streams. */
export async function objectStreamPdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage();
  page.drawText('xref stream with object streams', { x: 50, y: 700 });
  return Buffer.from(await doc.save({ useObjectStreams: true }));
}

export async function acroFormPdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage();
  const form = doc.getForm();
  const name = form.createTextField('buyer.name');
  name.setText('Nguyen Van A');
  name.addToPage(page, { x: 50, y: 700, width: 200, height: 20 });
  const agree = form.createCheckBox('agree');
  agree.addToPage(page, { x: 50, y: 650, width: 20, height: 20 });
  agree.check();
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

/** A certification signature with DocMDP /P 1 (no change allowed); its /Contents is empty. */
export async function certifiedNoChangesPdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.addPage();
  const context = doc.context;
  const transform = context.obj({
    Type: 'SigRef',
    TransformMethod: 'DocMDP',
    TransformParams: { Type: 'TransformParams', P: 1, V: '1.2' },
  });
  const sig = context.register(
    context.obj({
      Type: 'Sig',
      Filter: 'Adobe.PPKLite',
      SubFilter: 'ETSI.CAdES.detached',
      Reference: [transform],
    }),
  );
  doc.catalog.set(PDFName.of('Perms'), context.obj({ DocMDP: sig }));
  doc.catalog.set(PDFName.of('Version'), PDFName.of('1.7'));
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

/**
 * A hybrid-reference file: the classic table lists the plain objects and its trailer's
 * `/XRefStm` names an xref stream for the page tree root, which sits in an object stream, so
 * reading the pages needs the hybrid rules.
 */
export function hybridPdf(): Buffer {
  const parts: Buffer[] = [];
  const offsets: Record<number, number> = {};
  let size = 0;
  const push = (s: string | Buffer) => {
    const b = typeof s === 'string' ? Buffer.from(s, 'latin1') : s;
    parts.push(b);
    size += b.length;
  };
  push('%PDF-1.5\n%\xe2\xe3\xcf\xd3\n');
  const content = 'BT /F1 18 Tf 50 700 Td (hybrid reference file) Tj ET';
  offsets[1] = size;
  push('1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n');
  offsets[3] = size;
  push(
    '3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>\nendobj\n',
  );
  offsets[4] = size;
  push(`4 0 obj\n<< /Length ${content.length} >>\nstream\n${content}\nendstream\nendobj\n`);
  offsets[5] = size;
  push('5 0 obj\n<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>\nendobj\n');
  // Object stream 6 holds object 2 (the page tree root).
  const pagesObject = '<< /Type /Pages /Kids [3 0 R] /Count 1 >>';
  const header = '2 0 ';
  const objStm = zlib.deflateSync(Buffer.from(header + pagesObject, 'latin1'));
  offsets[6] = size;
  push(
    `6 0 obj\n<< /Type /ObjStm /N 1 /First ${header.length} /Filter /FlateDecode /Length ${objStm.length} >>\nstream\n`,
  );
  push(objStm);
  push('\nendstream\nendobj\n');
  // The xref stream (object 7): object 2 compressed in 6, 6 and 7 themselves plain.
  const rows = Buffer.alloc(3 * 6);
  const row = (i: number, type: number, f2: number, f3: number) => {
    rows[i * 6] = type;
    rows.writeUInt32BE(f2, i * 6 + 1);
    rows[i * 6 + 5] = f3;
  };
  const xrefStmOffset = size;
  row(0, 2, 6, 0); // object 2
  row(1, 1, offsets[6]!, 0); // object 6
  row(2, 1, xrefStmOffset, 0); // object 7
  push(
    `7 0 obj\n<< /Type /XRef /Size 8 /W [1 4 1] /Index [2 1 6 2] /Length ${rows.length} >>\nstream\n`,
  );
  push(rows);
  push('\nendstream\nendobj\n');
  const xrefOffset = size;
  const entry = (offset: number, gen: number, kind: string) =>
    `${String(offset).padStart(10, '0')} ${String(gen).padStart(5, '0')} ${kind}\r\n`;
  // Objects 2, 6 and 7 are not in the table: only the xref stream lists them.
  let table = 'xref\n0 2\n';
  table += entry(0, 65535, 'f');
  table += entry(offsets[1]!, 0, 'n');
  table += '3 3\n';
  table += entry(offsets[3]!, 0, 'n');
  table += entry(offsets[4]!, 0, 'n');
  table += entry(offsets[5]!, 0, 'n');
  push(table);
  push(
    `trailer\n<< /Size 8 /Root 1 0 R /XRefStm ${xrefStmOffset} >>\nstartxref\n${xrefOffset}\n%%EOF\n`,
  );
  return Buffer.concat(parts);
}

/**
 * A PDF of about `megabytes` MB (MiB) written straight to `file`, never held in memory: `pages`
 * pages, each showing one image of random RGB samples (incompressible, so the size is real for
 * every tool) and a classic xref table with /Info, which @signpdf's plain placeholder needs.
 * For the 50 MB tests and the signing bench.
 */
export function writeLargePdf(file: string, megabytes: number, pages = 4): void {
  const width = 1024;
  const rowBytes = width * 3;
  const height = Math.max(1, Math.ceil((megabytes * 1024 * 1024) / pages / rowBytes));
  const imageBytes = rowBytes * height;
  const fd = fs.openSync(file, 'w');
  try {
    let offset = 0;
    const offsets: number[] = [];
    const put = (bytes: string | Buffer) => {
      const b = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes;
      fs.writeSync(fd, b);
      offset += b.length;
    };
    const object = (body: string) => {
      offsets.push(offset);
      put(`${offsets.length} 0 obj\n${body}\nendobj\n`);
    };
    put('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n');
    // 1 catalog, 2 page tree, 3 info, then per page: page, content stream, image.
    const pageNumber = (i: number) => 4 + i * 3;
    object('<< /Type /Catalog /Pages 2 0 R >>');
    const kids = Array.from({ length: pages }, (_, i) => `${pageNumber(i)} 0 R`).join(' ');
    object(`<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`);
    object('<< /Producer (esign test corpus) >>');
    const drawImage = 'q 595 0 0 842 0 0 cm /Im0 Do Q';
    const chunk = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < pages; i++) {
      const page = pageNumber(i);
      object(
        `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents ${page + 1} 0 R /Resources << /XObject << /Im0 ${page + 2} 0 R >> >> >>`,
      );
      object(`<< /Length ${drawImage.length} >>\nstream\n${drawImage}\nendstream`);
      offsets.push(offset);
      put(
        `${page + 2} 0 obj\n<< /Type /XObject /Subtype /Image /Width ${width} /Height ${height} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Length ${imageBytes} >>\nstream\n`,
      );
      for (let written = 0; written < imageBytes; written += chunk.length) {
        const part = chunk.subarray(0, Math.min(chunk.length, imageBytes - written));
        put(crypto.randomFillSync(part));
      }
      put('\nendstream\nendobj\n');
    }
    const xref = offset;
    const entries = offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n\r\n`).join('');
    put(`xref\n0 ${offsets.length + 1}\n0000000000 65535 f\r\n${entries}`);
    put(
      `trailer\n<< /Size ${offsets.length + 1} /Root 1 0 R /Info 3 0 R >>\nstartxref\n${xref}\n%%EOF\n`,
    );
  } finally {
    fs.closeSync(fd);
  }
}

export const hasQpdf = spawnSync('qpdf', ['--version']).status === 0;

export function qpdf(args: string[], input: string, output: string): void {
  const result = spawnSync('qpdf', [...args, input, output]);
  // qpdf exits 3 on warnings; the variants we make must not have any.
  if (result.status !== 0) throw new Error(`qpdf ${args.join(' ')}: ${result.stderr}`);
}

/** `qpdf --check` exit status and output. */
export function qpdfCheck(file: string): { ok: boolean; output: string } {
  const result = spawnSync('qpdf', ['--check', file], { encoding: 'utf8' });
  return { ok: result.status === 0, output: `${result.stdout}${result.stderr}` };
}

/** pdfsig's report; with no NSS database it checks signatures without trusting any issuer. */
export function pdfsig(file: string): string {
  const result = spawnSync('pdfsig', [file], { encoding: 'utf8' });
  return `${result.stdout}${result.stderr}`;
}

/**
 * pdfsig's report with the NSS database `nssDir` (see nssDatabase): it trusts what the database
 * trusts and asks the certificates' OCSP responders itself, so the call must not block this
 * process when the responder is a test server in it.
 */
export function pdfsigTrusting(file: string, nssDir: string): Promise<string> {
  return new Promise((resolve) => {
    execFile('pdfsig', ['-nssdir', `sql:${nssDir}`, file], (_error, stdout, stderr) =>
      resolve(`${stdout}${stderr}`),
    );
  });
}

/** A new NSS database in `dir` (no password) trusting each PEM certificate file as a CA. */
export function nssDatabase(dir: string, caFiles: string[]): string {
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('certutil', ['-N', '-d', `sql:${dir}`, '--empty-password'], { stdio: 'pipe' });
  caFiles.forEach((caFile, index) => {
    execFileSync(
      'certutil',
      ['-A', '-d', `sql:${dir}`, '-n', `ca-${index}`, '-t', 'C,C,C', '-i', caFile],
      { stdio: 'pipe' },
    );
  });
  return dir;
}

/** Per signature of pdfsig's report: its validation line and whether it covers the file. */
export function pdfsigSignatures(
  report: string,
): { valid: boolean; trusted: boolean; total: boolean; text: string }[] {
  return report
    .split(/^Signature #\d+:$/m)
    .slice(1)
    .map((text) => ({
      valid: /Signature Validation: Signature is Valid\./.test(text),
      trusted: /Certificate Validation: Certificate is Trusted\./.test(text),
      total: /Total document signed/.test(text) && !/Not total document signed/.test(text),
      text,
    }));
}

/** A throw-away RSA key and self-signed certificate, made by openssl in `dir`. */
export function makeSigner(dir: string): { key: string; cert: string } {
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      '/CN=Test Signer',
      '-addext',
      'keyUsage=critical,digitalSignature,nonRepudiation',
    ],
    { stdio: 'pipe' },
  );
  return { key, cert };
}

/**
 * A detached CMS (openssl cms -sign) over the two byte ranges' content; `extraCertificates` (a
 * PEM file) adds the chain, `cades` the signing-certificate-v2 attribute.
 */
export function opensslCms(
  file: string,
  byteRange: [number, number, number, number],
  signer: { key: string; cert: string },
  dir: string,
  options: { extraCertificates?: string; cades?: boolean } = {},
): Buffer {
  const bytes = fs.readFileSync(file);
  const content = Buffer.concat([
    bytes.subarray(byteRange[0], byteRange[0] + byteRange[1]),
    bytes.subarray(byteRange[2], byteRange[2] + byteRange[3]),
  ]);
  const input = path.join(dir, `content-${process.hrtime.bigint()}.bin`);
  const output = `${input}.p7s`;
  fs.writeFileSync(input, content);
  execFileSync(
    'openssl',
    [
      'cms',
      '-sign',
      '-binary',
      '-outform',
      'DER',
      '-md',
      'sha256',
      '-nosmimecap',
      '-signer',
      signer.cert,
      '-inkey',
      signer.key,
      ...(options.extraCertificates === undefined ? [] : ['-certfile', options.extraCertificates]),
      ...(options.cades ? ['-cades'] : []),
      '-in',
      input,
      '-out',
      output,
    ],
    { stdio: 'pipe' },
  );
  const der = fs.readFileSync(output);
  fs.rmSync(input);
  fs.rmSync(output);
  return der;
}
