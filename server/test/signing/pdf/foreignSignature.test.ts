import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { preparePdfSignature } from '../../../src/pdf/signatureUpdates';
import { embedSignature, readSignatures } from '../../../src/pdf/signing';
import { TestPki } from '../cms/testPki';
import { opensslP12, signWithSignpdf } from '../foreignSigners';
import { classicPdf, makeSigner, opensslCms, pdfsig, pdfsigSignatures } from './corpus';

jest.setTimeout(120_000);

let dir: string;
let pki: TestPki;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pdf-foreign-'));
  pki = new TestPki();
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  pki.remove();
});

describe('a PDF signed by @signpdf', () => {
  it('is valid in pdfsig, and stays valid after our signature is added', async () => {
    const source = path.join(dir, 'source.pdf');
    fs.writeFileSync(source, await classicPdf(2));
    const p12Path = opensslP12(pki, 'signpdf-signer', 'test-passphrase');
    const signedBySignpdf = path.join(dir, 'signpdf.pdf');
    await signWithSignpdf(source, signedBySignpdf, {
      p12Path,
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
