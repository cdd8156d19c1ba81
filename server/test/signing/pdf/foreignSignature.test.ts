import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { embedSignature, preparePdfSignature, readSignatures } from '../../../src/pdf/signing';
import { opensslP12, signWithSignpdf } from '../foreignSigners';
import { classicPdf, makeSigner, opensslCms, pdfsig, pdfsigSignatures } from './corpus';

jest.setTimeout(120_000);

let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pdf-foreign-'));
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('a PDF signed by @signpdf', () => {
  it('is valid in pdfsig, and stays valid after our signature is added', async () => {
    const source = path.join(dir, 'source.pdf');
    fs.writeFileSync(source, await classicPdf(2));
    const p12 = opensslP12(dir, 'test-passphrase');
    const signedBySignpdf = path.join(dir, 'signpdf.pdf');
    await signWithSignpdf(source, signedBySignpdf, {
      p12Path: p12.p12Path,
      passphrase: 'test-passphrase',
      signingTime: new Date('2026-11-26T04:00:00Z'),
    });

    const once = pdfsigSignatures(pdfsig(signedBySignpdf));
    expect(once).toHaveLength(1);
    expect(once[0]!.text).toContain('Signature is Valid');
    expect(once[0]!.total).toBe(true);

    const prepared = await preparePdfSignature(signedBySignpdf, {
      signingTime: new Date('2026-11-26T04:05:00Z'),
      signerName: 'Trần Thị Bình',
      tempDir: dir,
    });
    const ours = makeSigner(dir);
    await embedSignature(
      prepared.path,
      prepared,
      opensslCms(prepared.path, prepared.byteRange, ours, dir),
    );

    const twice = pdfsigSignatures(pdfsig(prepared.path));
    expect(twice.map((s) => s.valid)).toEqual([true, true]);
    expect(twice.map((s) => s.total)).toEqual([false, true]);
    const read = readSignatures(prepared.path);
    expect(read.signatures.map((s) => s.subFilter)).toEqual([
      'adbe.pkcs7.detached',
      'ETSI.CAdES.detached',
    ]);
  });
});
