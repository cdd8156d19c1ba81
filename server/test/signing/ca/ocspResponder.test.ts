import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { developmentCa } from '../../../src/dev/developmentCa';
import { sealKey } from '../../../src/keys/signingKeys';
import { readDss } from '../../../src/pdf/signing';
import { serveApp } from '../../../src/serve';
import { readCertificate } from '../../../src/signing/certificates/certificate';
import { ocspResponseConcerns } from '../../../src/signing/certificates/ocsp';
import { sealPdf } from '../../../src/signing/finalize';
import { certifiedKey } from '../../../src/signing/keys/signingKey';
import { verifyPdfSignatures } from '../../../src/signing/verification';
import { writeDevelopmentCaPem } from '../../support/developmentCaFile';
import { createHarness, type Harness } from '../../support/harness';
import { selfSigned } from '../certificates/testPki';
import { classicPdf } from '../pdf/corpus';

jest.setTimeout(120_000);

const run = promisify(execFile);

let h: Harness;
let server: http.Server;
let url: string;
let work: string;
let caFile: string;
let sealFile: string;
let tsaFile: string;

const pemOf = (der: Buffer) =>
  `-----BEGIN CERTIFICATE-----\n${der.toString('base64')}\n-----END CERTIFICATE-----\n`;

/** `openssl ocsp` against the responder over HTTP; stdout and stderr together. */
async function ocsp(args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run('openssl', ['ocsp', ...args], { cwd: work });
    return `${stdout}${stderr}`;
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return `${failed.stdout ?? ''}${failed.stderr ?? ''}`;
  }
}

/** openssl's reading of a DER answer about the seal (its nonce not checked): verified, good. */
async function expectSealGood(answer: Buffer, name: string): Promise<void> {
  const file = path.join(work, name);
  fs.writeFileSync(file, answer);
  const out = await ocsp([
    '-no_nonce',
    '-issuer',
    caFile,
    '-cert',
    sealFile,
    '-respin',
    file,
    '-CAfile',
    caFile,
  ]);
  expect(out).toContain('Response verify OK');
  expect(out).toContain(`${sealFile}: good`);
}

beforeAll(async () => {
  h = createHarness();
  // openssl judges the answer's and the certificates' times by the real clock.
  h.clock.set(new Date());
  work = fs.mkdtempSync(path.join(h.dataDir, 'work-'));
  const ca = await developmentCa(h.deps);
  caFile = path.join(work, 'ca.pem');
  fs.writeFileSync(caFile, ca.certificatePem);
  sealFile = path.join(work, 'seal.pem');
  fs.writeFileSync(sealFile, pemOf(certifiedKey(await sealKey(h.deps)).certificate));
  tsaFile = await writeDevelopmentCaPem(h.deps.db, path.join(work, 'tsa.pem'), 'tsa');
  const listening = new Promise<number>((resolve) => {
    server = serveApp(
      h.app.fetch,
      { hostname: '127.0.0.1', port: 0, logger: h.deps.logger },
      ({ port }) => resolve(port),
    );
  });
  url = `http://127.0.0.1:${await listening}/api/dev/ocsp`;
});

afterAll(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await h?.close();
});

describe('the development CA publishes OCSP', () => {
  it('names its responder in the authorityInfoAccess of what it issues (seal, TSA)', () => {
    for (const file of [sealFile, tsaFile]) {
      const text = execFileSync('openssl', [
        'x509',
        '-in',
        file,
        '-noout',
        '-ext',
        'authorityInfoAccess',
      ]).toString();
      expect(text).toContain('OCSP - URI:http://127.0.0.1:3000/api/dev/ocsp');
    }
  });

  it('openssl ocsp: the seal and the TSA certificates are good, the answer verifies, the nonce is echoed', async () => {
    for (const file of [sealFile, tsaFile]) {
      const out = await ocsp(['-issuer', caFile, '-cert', file, '-url', url, '-CAfile', caFile]);
      expect(out).toContain('Response verify OK');
      expect(out).toContain(`${file}: good`);
      expect(out).toMatch(/This Update: .*\n\s*Next Update: /);
      // openssl sends a nonce by default and warns when the answer lacks it.
      expect(out).not.toMatch(/WARNING: no nonce/);
    }
    // SHA-256 CertIDs too.
    const sha256 = await ocsp([
      '-sha256',
      '-issuer',
      caFile,
      '-cert',
      sealFile,
      '-url',
      url,
      '-CAfile',
      caFile,
    ]);
    expect(sha256).toContain(`${sealFile}: good`);
    expect(sha256).toContain('Response verify OK');
  });

  it('openssl ocsp: a serial it never issued is unknown; a certificate of another CA is unauthorized', async () => {
    const ask = (issuer: string) =>
      ocsp(['-issuer', issuer, '-serial', '0x1234', '-url', url, '-CAfile', caFile]);
    const unknown = await ask(caFile);
    expect(unknown).toContain('Response verify OK');
    expect(unknown).toContain('0x1234: unknown');
    const other = await selfSigned(work, 'other', 'Other CA', 'ec');
    const foreign = await ask(other.certFile);
    expect(foreign).toContain('Responder Error: unauthorized (6)');
  });

  it('answers the GET form (RFC 6960 A.1) and refuses what is no OCSPRequest with malformedRequest', async () => {
    const request = path.join(work, 'get.req');
    await ocsp(['-issuer', caFile, '-cert', sealFile, '-no_nonce', '-reqout', request]);
    const encoded = encodeURIComponent(fs.readFileSync(request).toString('base64'));
    const response = await h.request('GET', `/api/dev/ocsp/${encoded}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/ocsp-response');
    await expectSealGood(Buffer.from(await response.arrayBuffer()), 'get.resp');

    const garbage = await h.app.request('/api/dev/ocsp', {
      method: 'POST',
      headers: { 'content-type': 'application/ocsp-request' },
      body: 'not an OCSP request',
    });
    expect(garbage.status).toBe(200);
    const answer = path.join(work, 'garbage.resp');
    fs.writeFileSync(answer, Buffer.from(await garbage.arrayBuffer()));
    expect(await ocsp(['-respin', answer, '-resp_text', '-noverify'])).toContain(
      'Responder Error: malformedrequest (1)',
    );
    const wrongType = await h.request('POST', '/api/dev/ocsp', {
      body: 'x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(wrongType.status).toBe(415);
  });

  it('is not there in production', async () => {
    const production = createHarness({
      APP_ENV: 'production',
      TSA_URL: 'https://tsa.example/tsa',
      JWT_SECRET: 'a'.repeat(32),
    });
    try {
      const response = await production.app.request('/api/dev/ocsp', {
        method: 'POST',
        headers: { 'content-type': 'application/ocsp-request' },
        body: 'x',
      });
      expect(response.status).toBe(404);
      expect(production.deps.localOcsp).toBeUndefined();
    } finally {
      await production.close();
    }
  });
});

describe('through a real signing', () => {
  it('a seal signature reaches B-LT: its DSS holds the responder’s answer, asked in-process', async () => {
    const source = path.join(work, 'contract.pdf');
    fs.writeFileSync(source, await classicPdf());
    const sealed = await sealPdf(h.deps, await sealKey(h.deps), source, { reason: 'OCSP' });
    try {
      const dss = readDss(sealed);
      const ca = readCertificate((await developmentCa(h.deps)).certificate);
      const seal = readCertificate(certifiedKey(await sealKey(h.deps)).certificate);
      expect(dss.ocspResponses.filter((der) => ocspResponseConcerns(der, seal, ca))).toHaveLength(
        1,
      );
      const verification = await verifyPdfSignatures(h.deps, sealed, { tenantId: null });
      expect(verification.signatures[0]).toMatchObject({
        isValid: true,
        certificateStatus: 'valid',
        level: 'B-LT',
      });
      // The DSS answer is openssl's "good" too.
      await expectSealGood(dss.ocspResponses[0]!, 'dss.resp');
    } finally {
      fs.rmSync(sealed, { force: true });
    }
  });
});
