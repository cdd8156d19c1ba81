import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CodedError } from '@esign/shared';
import { createOpensslPki, type OpensslPki } from '../../../../test/support/opensslTsa';
import { preparePdfSignature } from '../../../src/pdf/signatureUpdates';
import {
  embedSignature,
  type PdfRevision,
  type RevisionChange,
  readSignatures,
} from '../../../src/pdf/signing';
import { checkChainRevocation } from '../../../src/signing/certificates';
import {
  type SignatureVerification,
  type VerificationDeps,
  verifyPdfSignatures,
} from '../../../src/signing/verification';
import { judgeLaterRevisions } from '../../../src/signing/verification/changes';
import { addTrustAnchor } from '../../../src/trust/service';
import { createHarness, type Harness } from '../../support/harness';
import { type Issued, selfSigned, signedBy, TestPki } from '../certificates/testPki';
import { classicPdf, opensslCms, pdfsigSignatures } from '../pdf/corpus';
import { appendContentChange, type FixtureSigner, nssTrusting, signPdf } from '../signedPdfs';

jest.setTimeout(180_000);

let h: Harness;
let deps: VerificationDeps;
let pki: TestPki;
let tsa: OpensslPki;
let dir: string;
let nssDir: string;
let source: string;
let signer: FixtureSigner;
let signerIssued: Issued;

const pem = (der: Buffer) =>
  Buffer.from(
    `-----BEGIN CERTIFICATE-----\n${der.toString('base64')}\n-----END CERTIFICATE-----\n`,
  );

const fixture = (issued: Issued, chain: Buffer[]): FixtureSigner => ({
  certificate: issued.der,
  chain,
  keyFile: issued.keyFile,
});

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pdf-verify-'));
  h = createHarness({ OUTBOUND_ALLOWLIST: '127.0.0.1' });
  h.clock.set(new Date());
  deps = h.deps;
  pki = await TestPki.create();
  tsa = createOpensslPki();
  for (const der of [pki.root.der, tsa.rootDer]) {
    await addTrustAnchor(h.deps.db, h.now(), { tenantId: null, certificateFile: pem(der) });
  }
  nssDir = nssTrusting(dir, pki.root.certFile);
  source = path.join(dir, 'contract.pdf');
  fs.writeFileSync(source, await classicPdf());
  signerIssued = await pki.issue('Nguyen Van A');
  signer = fixture(signerIssued, [pki.intermediate.der]);
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
const target = (name: string) => path.join(dir, `${name}-${++counter}.pdf`);

async function signed(
  name: string,
  options: Partial<Parameters<typeof signPdf>[2]> = {},
  from = source,
): Promise<string> {
  const file = target(name);
  await signPdf(from, file, { signer, tempDir: dir, tsa, ...options });
  return file;
}

const verify = (file: string) => verifyPdfSignatures(deps, file, { tenantId: null });

/**
 * pdfsig's words and ours, side by side: each row is what pdfsig prints for a signature and
 * the field of our report that says the same. pdfsig checks no timestamp and no later change.
 */
const agreement: [RegExp, (s: SignatureVerification) => boolean][] = [
  [/Signature Validation: Signature is Valid\./, (s) => s.integrityCheck === 'passed'],
  [/Signature Validation: Digest Mismatch\./, (s) => s.integrityCheck === 'failed'],
  [/Certificate Validation: Certificate is Trusted\./, (s) => s.certificateStatus === 'valid'],
  [
    /Certificate Validation: Certificate issuer isn't Trusted\./,
    (s) => s.certificateStatus === 'untrusted',
  ],
  [/Certificate Validation: Certificate has Expired/, (s) => s.certificateStatus === 'expired'],
  [
    /Certificate Validation: Certificate has been Revoked\./,
    (s) => s.certificateStatus === 'revoked',
  ],
  [/- Total document signed/, (s) => s.coversWholeDocument],
  [/- Not total document signed/, (s) => !s.coversWholeDocument],
];

/**
 * pdfsig run without blocking: it asks the test PKI's OCSP responder, which answers from this
 * process (spawnSync would leave the responder deaf until NSS gives up).
 */
function pdfsigReport(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('pdfsig', ['-nssdir', nssDir, file], (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') reject(error);
      else resolve(`${stdout}${stderr}`);
    });
  });
}

/** For each signature, every pdfsig line of the table that appears holds in ours. */
async function expectAgreement(file: string, ours: SignatureVerification[]): Promise<string[]> {
  const theirs = pdfsigSignatures(await pdfsigReport(file));
  expect(theirs).toHaveLength(ours.length);
  theirs.forEach((their, i) => {
    const our = ours[i]!;
    for (const [text, holds] of agreement) {
      const pdfsigSays = text.test(their.text);
      // Only where pdfsig gives a verdict for this row's question do we compare.
      if (pdfsigSays)
        expect({ row: String(text), ours: holds(our) }).toEqual({ row: String(text), ours: true });
    }
  });
  return theirs.map((t) => t.text);
}

describe('verifyPdfSignatures agrees with pdfsig on a tampered corpus', () => {
  it('untouched: valid, integrity passed, certificate valid, timestamp verified, whole document', async () => {
    const file = await signed('untouched');
    const result = await verify(file);
    const [signature] = result.signatures;
    expect(result.isValid).toBe(true);
    expect(signature).toMatchObject({
      fieldName: 'Signature1',
      signerName: 'Nguyen Van A',
      isValid: true,
      integrityCheck: 'passed',
      certificateStatus: 'valid',
      timestampVerified: true,
      coversWholeDocument: true,
      modifiedAfterSigning: 'none',
      subFilter: 'ETSI.CAdES.detached',
      level: 'B-T',
      problems: [],
    });
    expect(signature!.certificate).toMatchObject({
      subject: 'CN=Nguyen Van A',
      issuer: 'CN=Test Intermediate CA',
    });
    const [text] = await expectAgreement(file, result.signatures);
    expect(text).toMatch(/Signature is Valid\./);
    expect(text).toMatch(/Certificate is Trusted\./);
    expect(text).toMatch(/Total document signed/);
  });

  it('one byte changed in a signed range: integrity failed / pdfsig "Digest Mismatch"', async () => {
    const file = await signed('tampered');
    const bytes = fs.readFileSync(file);
    // A digit of the page's text, inside the first range: the file still parses.
    const at = bytes.indexOf('Clause 1.7');
    bytes[at + 7] = '9'.charCodeAt(0);
    fs.writeFileSync(file, bytes);
    const result = await verify(file);
    expect(result.isValid).toBe(false);
    expect(result.signatures[0]).toMatchObject({ isValid: false, integrityCheck: 'failed' });
    expect(result.signatures[0]!.problems.join('\n')).toMatch(/digest does not match/);
    const [text] = await expectAgreement(file, result.signatures);
    expect(text).toMatch(/Digest Mismatch\./);
  });

  it('garbage appended after the last %%EOF: not the whole document, nothing modified', async () => {
    const file = await signed('garbage');
    fs.appendFileSync(file, 'trailing garbage that no revision holds\n');
    const result = await verify(file);
    expect(result.signatures[0]).toMatchObject({
      isValid: true,
      integrityCheck: 'passed',
      coversWholeDocument: false,
      modifiedAfterSigning: 'none',
    });
    expect(result.signatures[0]!.problems.join('\n')).toMatch(/belong to no revision/);
    const [text] = await expectAgreement(file, result.signatures);
    expect(text).toMatch(/Not total document signed/);
  });

  it('a DSS appended (B-LT): allowed after the signature, revocation read from the document', async () => {
    const chain = [signer.certificate, pki.intermediate.der, pki.root.der];
    const revocation = await checkChainRevocation(deps, chain, new Date());
    const file = await signed('blt', {
      dss: {
        certificates: chain,
        ocspResponses: revocation.certificates.flatMap((c) =>
          c.ocspResponse ? [c.ocspResponse] : [],
        ),
        crls: revocation.certificates.flatMap((c) => (c.crl ? [c.crl] : [])),
      },
    });
    const hits = pki.hits.length;
    const result = await verify(file);
    expect(result.signatures[0]).toMatchObject({
      isValid: true,
      level: 'B-LT',
      coversWholeDocument: false,
      modifiedAfterSigning: 'allowed',
    });
    // Nothing asked online: the DSS answered.
    expect(pki.hits.length).toBe(hits);
    const [text] = await expectAgreement(file, result.signatures);
    expect(text).toMatch(/Signature is Valid\./);
  });

  it('a revoked certificate: revoked / pdfsig "Certificate has been Revoked"', async () => {
    const revoked = await pki.issue('Revoked Signer');
    await pki.revoke(revoked);
    await pki.publishCrl();
    // Revoked before the signature's timestamp: the key was no longer the signer's.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const file = await signed('revoked', { signer: fixture(revoked, [pki.intermediate.der]) });
    h.clock.set(new Date());
    const result = await verify(file);
    expect(result.signatures[0]).toMatchObject({
      isValid: false,
      integrityCheck: 'passed',
      certificateStatus: 'revoked',
    });
    expect(result.signatures[0]!.problems.join('\n')).toMatch(/revoked at/);
    const [text] = await expectAgreement(file, result.signatures);
    expect(text).toMatch(/Certificate has been Revoked\./);
  });

  it('an expired certificate: expired / pdfsig "Certificate has Expired"', async () => {
    const day = 24 * 3600_000;
    const stamp = (d: Date) => `${d.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
    const expired = await pki.issue('Expired Signer', {
      startDate: stamp(new Date(Date.now() - 3 * day)),
      endDate: stamp(new Date(Date.now() - day)),
    });
    const file = await signed('expired', { signer: fixture(expired, [pki.intermediate.der]) });
    const result = await verify(file);
    expect(result.signatures[0]).toMatchObject({
      isValid: false,
      integrityCheck: 'passed',
      certificateStatus: 'expired',
    });
    const [text] = await expectAgreement(file, result.signatures);
    expect(text).toMatch(/Certificate has Expired/);
  });

  it('an untrusted root: untrusted / pdfsig "Certificate issuer isn\'t Trusted"', async () => {
    const otherRoot = await selfSigned(dir, 'other-root', 'Unknown Root CA', 'rsa');
    const stranger = await signedBy(dir, otherRoot, 'stranger', 'Stranger', {
      ec: true,
      ext: 'basicConstraints=critical,CA:false\nkeyUsage=critical,digitalSignature,nonRepudiation',
    });
    const file = await signed('untrusted', { signer: fixture(stranger, [otherRoot.der]) });
    const result = await verify(file);
    expect(result.signatures[0]).toMatchObject({
      isValid: false,
      integrityCheck: 'passed',
      certificateStatus: 'untrusted',
    });
    const [text] = await expectAgreement(file, result.signatures);
    expect(text).toMatch(/Certificate issuer isn't Trusted\./);
  });

  it('a timestamp for another signature: timestampVerified false (pdfsig checks no timestamp)', async () => {
    const file = await signed('foreign-token', { timestampOtherSignature: true });
    const result = await verify(file);
    expect(result.signatures[0]).toMatchObject({
      isValid: false,
      integrityCheck: 'passed',
      timestampVerified: false,
      level: 'B-B',
    });
    expect(result.signatures[0]!.problems.join('\n')).toMatch(/timestamp is not valid.*other data/);
    const [text] = await expectAgreement(file, result.signatures);
    expect(text).toMatch(/Signature is Valid\./);
  });

  it('two signatures, the page content changed between them: the first is disallowed', async () => {
    const first = await signed('first');
    appendContentChange(first);
    const file = await signed('second', { fieldName: 'Signature2' }, first);
    const result = await verify(file);
    expect(result.isValid).toBe(false);
    const [one, two] = result.signatures;
    expect(one).toMatchObject({
      isValid: false,
      integrityCheck: 'passed',
      modifiedAfterSigning: 'disallowed',
      coversWholeDocument: false,
    });
    expect(one!.problems.join('\n')).toMatch(/changes object \d+ \(page 1: \/Contents\)/);
    expect(two).toMatchObject({
      isValid: true,
      modifiedAfterSigning: 'none',
      coversWholeDocument: true,
    });
    const texts = await expectAgreement(file, result.signatures);
    expect(texts[0]).toMatch(/Not total document signed/);
  });

  it('a second signature alone after the first: allowed, both valid', async () => {
    const first = await signed('approval-1');
    const file = await signed('approval-2', { fieldName: 'Signature2' }, first);
    const result = await verify(file);
    expect(result.isValid).toBe(true);
    expect(result.signatures.map((s) => s.modifiedAfterSigning)).toEqual(['allowed', 'none']);
    await expectAgreement(file, result.signatures);
  });
});

describe('signatures made by other tools', () => {
  it.each([
    ['adbe.pkcs7.detached', false],
    ['ETSI.CAdES.detached', true],
  ] as const)('openssl cms -sign as %s verifies', async (subFilter, cades) => {
    const prepared = await preparePdfSignature(source, {
      signingTime: new Date(),
      tempDir: dir,
    });
    const file = target('openssl');
    fs.renameSync(prepared.path, file);
    // Same length as ETSI.CAdES.detached: the offsets and byte range stay as prepared.
    const bytes = fs.readFileSync(file);
    const at = bytes.indexOf('/SubFilter /ETSI.CAdES.detached');
    bytes.write(`/SubFilter /${subFilter}`, at, 'latin1');
    fs.writeFileSync(file, bytes);
    const chainFile = path.join(dir, 'chain.pem');
    fs.writeFileSync(chainFile, pki.intermediate.pem);
    const cms = opensslCms(
      file,
      prepared.byteRange,
      { key: signerIssued.keyFile, cert: signerIssued.certFile },
      dir,
      { extraCertificates: chainFile, cades },
    );
    await embedSignature(file, prepared, cms);
    const result = await verify(file);
    expect(result.signatures[0]).toMatchObject({
      isValid: true,
      subFilter,
      integrityCheck: 'passed',
      certificateStatus: 'valid',
      timestampVerified: false,
      level: 'B-B',
    });
    await expectAgreement(file, result.signatures);
  });
});

describe('bad input', () => {
  it('a file that is not a PDF: 415 NOT_A_PDF; an unsigned PDF is not valid', async () => {
    const text = path.join(dir, 'not.pdf');
    fs.writeFileSync(text, 'hello');
    await expect(verify(text)).rejects.toMatchObject({ code: 'NOT_A_PDF' });
    const unsigned = await verify(source);
    expect(unsigned).toEqual({ isValid: false, signatures: [] });
    expect(readSignatures(source).signatures).toEqual([]);
  });

  it('a garbled CMS is a finding, not an error', async () => {
    const file = await signed('garbled');
    const bytes = fs.readFileSync(file);
    const [signature] = readSignatures(file).signatures;
    // The first bytes of the DER inside /Contents.
    bytes.write(
      crypto.randomBytes(8).toString('hex').toUpperCase(),
      signature!.byteRange[1] + 1,
      'latin1',
    );
    fs.writeFileSync(file, bytes);
    const result = await verify(file).catch((error: unknown) => {
      if (error instanceof CodedError) throw new Error(`refused: ${error.message}`);
      throw error;
    });
    expect(result.signatures[0]).toMatchObject({ isValid: false, integrityCheck: 'failed' });
  });
});

describe('what a later revision may change, by DocMDP permission', () => {
  const revision = (changes: RevisionChange[]): PdfRevision => ({
    index: 1,
    startOffset: 0,
    endOffset: 1,
    xref: 'table',
    changes,
  });
  const change = (kind: RevisionChange['kind'], object = '3 0 R'): RevisionChange => ({
    object,
    kind,
    what: `changes object ${object}`,
  });
  const secondSignature = revision([change('signature', '3 0 R'), change('signature', '9 0 R')]);
  const dssOnly = revision([change('dss', '1 0 R')]);
  const documentTimestamp = revision([change('timestamp', '3 0 R'), change('dss', '1 0 R')]);
  const formFilled = revision([change('form', '12 0 R')]);
  const annotationAdded = revision([change('annotation', '30 0 R')]);
  const catalogReplaced = revision([change('other', 'trailer')]);
  const verdict = (revisions: PdfRevision[], p: 1 | 2 | 3 | undefined) =>
    judgeLaterRevisions({ laterRevisions: revisions, laterFindings: [] }, p).modifiedAfterSigning;

  it.each([
    ['DSS only', dssOnly, ['allowed', 'allowed', 'allowed', 'allowed']],
    ['a document timestamp', documentTimestamp, ['allowed', 'allowed', 'allowed', 'allowed']],
    ['another signature', secondSignature, ['allowed', 'disallowed', 'allowed', 'allowed']],
    ['a form field filled', formFilled, ['disallowed', 'disallowed', 'allowed', 'allowed']],
    ['an annotation added', annotationAdded, ['disallowed', 'disallowed', 'disallowed', 'allowed']],
    [
      'the catalog replaced',
      catalogReplaced,
      ['disallowed', 'disallowed', 'disallowed', 'disallowed'],
    ],
  ] as const)('%s: approval, P1, P2, P3', (_label, later, expected) => {
    expect([undefined, 1, 2, 3].map((p) => verdict([later], p as 1 | 2 | 3 | undefined))).toEqual(
      expected,
    );
  });

  it('a /DSS entry counts as validation material only when it parses as what its list says', () => {
    const item = (type: 'certificate' | 'crl', data: Buffer): RevisionChange => ({
      object: '9 0 R',
      kind: 'dssItem',
      what: 'adds to /DSS object 9',
      dssItem: { type, data },
    });
    const garbage = revision([item('certificate', Buffer.from('not a certificate'))]);
    const judged = judgeLaterRevisions({ laterRevisions: [garbage], laterFindings: [] }, 1);
    expect(judged.changes).toEqual([
      { revision: 1, object: '9 0 R', what: 'adds to /DSS object 9, which is not a certificate' },
    ]);
    expect(judged.problems).toEqual([
      'Revision 1 adds to /DSS object 9, which is not a certificate',
    ]);
    const real = revision([item('certificate', pki.root.der)]);
    expect(verdict([real], 1)).toBe('allowed');
    // A certificate is not a CRL.
    expect(verdict([revision([item('crl', pki.root.der)])], undefined)).toBe('disallowed');
  });

  it('a finding of the signed revision (a hidden object referenced) is never allowed', () => {
    const judged = judgeLaterRevisions(
      {
        laterRevisions: [dssOnly],
        laterFindings: [{ revision: 1, object: '12 0 R', what: 'references object 12 ...' }],
      },
      3,
    );
    expect(judged.modifiedAfterSigning).toBe('disallowed');
    expect(judged.changes.map((c) => c.object)).toEqual(['12 0 R']);
  });
});
