import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { issueCertificate } from '../../../test/support/openssl';
import {
  createOpensslPki,
  type OpensslPki,
  opensslReply,
  readBody,
  sendReply,
} from '../../../test/support/opensslTsa';
import { tempDir } from '../../../test/support/tools';
import { classicPdf, nssDatabase, pdfsigSignatures, pdfsigTrusting } from '../signing/pdf/corpus';

/**
 * docs/engine.md's script, run as a reader would run it: extracted from the markdown into a file
 * at the repository root, started with `node --import tsx`, no server anywhere. Its inputs are a
 * key and certificate made by openssl under a test CA, and `openssl ts` as the timestamp
 * authority over plain HTTP; pdfsig judges the PDF it writes.
 */
const root = path.resolve(__dirname, '../../..');

function exampleScript(): string {
  const markdown = fs.readFileSync(path.join(root, 'docs/engine.md'), 'utf8');
  const block = /```ts\n([\s\S]*?)```/.exec(markdown);
  if (!block?.[1]) throw new Error('docs/engine.md has no ts block');
  return block[1];
}

function run(script: string, env: Record<string, string>): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', script],
      { cwd: root, env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, out: `${stdout}${stderr}` }),
    );
  });
}

let pki: OpensslPki;
let tsa: http.Server;
let tsaUrl: string;
let work: { dir: string; remove(): void };
let dir: string;

beforeAll(async () => {
  work = tempDir('engine-example-');
  dir = work.dir;
  pki = createOpensslPki();
  tsa = http.createServer((request, response) => {
    void readBody(request).then((query) => sendReply(response, opensslReply(pki, query)));
  });
  await new Promise<void>((resolve) => tsa.listen(0, '127.0.0.1', resolve));
  tsaUrl = `http://127.0.0.1:${(tsa.address() as AddressInfo).port}/tsa`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => tsa.close(() => resolve()));
  pki.remove();
  work.remove();
});

it('signs and verifies a PDF with the script of docs/engine.md, without a server; pdfsig agrees', async () => {
  issueCertificate(dir, {
    name: 'ca',
    key: 'rsa',
    subject: '/C=VN/O=Example CA/CN=Example Root',
    extensions: ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign'],
    days: 30,
  });
  const signer = issueCertificate(dir, {
    name: 'signer',
    key: 'ec',
    subject: '/C=VN/O=ACME/CN=Nguyễn Văn An',
    issuer: 'ca',
    extensions: ['keyUsage=critical,digitalSignature,nonRepudiation'],
    days: 30,
  });
  const input = path.join(dir, 'in.pdf');
  const output = path.join(dir, 'out.pdf');
  fs.writeFileSync(input, await classicPdf(2));
  const script = path.join(root, `.engine-example-${process.pid}.mts`);
  fs.writeFileSync(script, exampleScript());
  try {
    const result = await run(script, {
      PDF_IN: input,
      PDF_OUT: output,
      SIGNER_KEY: signer.keyFile,
      SIGNER_CHAIN: [signer.certificateFile, path.join(dir, 'ca.pem')].join(','),
      TSA_URL: tsaUrl,
      TRUST_ANCHORS: [path.join(dir, 'ca.pem'), pki.rootPem].join(','),
    });
    expect(result).toEqual({ code: 0, out: expect.stringMatching(/Nguyễn Văn An B-T valid\n/) });
  } finally {
    fs.rmSync(script, { force: true });
  }
  const nss = nssDatabase(path.join(dir, 'nss'), [path.join(dir, 'ca.pem')]);
  const [seen] = pdfsigSignatures(await pdfsigTrusting(output, nss));
  expect(seen).toMatchObject({ valid: true, trusted: true, total: true });
}, 120_000);
