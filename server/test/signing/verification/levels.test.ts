import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  buildSignedAttributes,
  compareDerEncodings,
  contextTag,
  derBytes,
  derChildren,
  derElement,
  derObjectIdentifier,
  derSequence,
  derSetOf,
  readDerWhole,
} from '@esign/shared/cms';
import { createOpensslPki, type OpensslPki } from '../../../../test/support/opensslTsa';
import { appendDss, preparePdfSignature } from '../../../src/pdf/signatureUpdates';
import {
  type DssMaterial,
  embedSignature,
  readDss,
  readSignatures,
} from '../../../src/pdf/signing';
import { checkChainRevocation } from '../../../src/signing/certificates';
import { assembleSignedData, parseSignedData } from '../../../src/signing/cms';
import { archivePdf } from '../../../src/signing/finalize/archive';
import { verifyPdfSignatures } from '../../../src/signing/verification';
import { addTrustAnchor } from '../../../src/trust/service';
import { writeDevelopmentCaPem } from '../../support/developmentCaFile';
import { createHarness, type Harness } from '../../support/harness';
import { type Issued, TestPki } from '../certificates/testPki';
import { classicPdf, pdfsigSignatures } from '../pdf/corpus';
import { type FixtureSigner, nssTrusting, opensslToken, signPdf } from '../signedPdfs';

/**
 * PAdES levels as the file proves them (padesLevel): B-B without a valid signature timestamp,
 * B-T with one, B-LT only when the file holds every certificate of the signer's chain but the
 * anchor with a revocation answer for each, B-LTA when a valid document timestamp covers a
 * revision that already held them. Online answers never raise a level.
 */

jest.setTimeout(180_000);

const run = promisify(execFile);

let h: Harness;
let pki: TestPki;
let tsa: OpensslPki;
let dir: string;
let source: string;
let issued: Issued;
let signer: FixtureSigner;

const pem = (der: Buffer) =>
  Buffer.from(
    `-----BEGIN CERTIFICATE-----\n${der.toString('base64')}\n-----END CERTIFICATE-----\n`,
  );

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pdf-levels-'));
  h = createHarness({ OUTBOUND_ALLOWLIST: '127.0.0.1' });
  h.clock.set(new Date());
  pki = await TestPki.create();
  tsa = createOpensslPki();
  for (const der of [pki.root.der, tsa.rootDer]) {
    await addTrustAnchor(h.deps.db, h.now(), { tenantId: null, certificateFile: pem(der) });
  }
  source = path.join(dir, 'contract.pdf');
  fs.writeFileSync(source, await classicPdf());
  issued = await pki.issue('Nguyen Van A');
  signer = { certificate: issued.der, chain: [pki.intermediate.der], keyFile: issued.keyFile };
});

afterAll(async () => {
  await pki?.close();
  tsa?.remove();
  await h?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  h.clock.set(new Date());
});

let counter = 0;
const target = (name: string) => path.join(dir, `${name}-${++counter}.pdf`);

async function signed(name: string, options: Partial<Parameters<typeof signPdf>[2]> = {}) {
  const file = target(name);
  await signPdf(source, file, { signer, tempDir: dir, tsa, ...options });
  return file;
}

const verify = async (file: string) =>
  (await verifyPdfSignatures(h.deps, file, { tenantId: null })).signatures;

/** The chain's certificates and every answer its CAs give now (OCSP for the leaf, CRL above). */
async function fullMaterial(chain: Buffer[]): Promise<DssMaterial> {
  const revocation = await checkChainRevocation(h.deps, chain, new Date());
  return {
    certificates: chain,
    ocspResponses: revocation.certificates.flatMap((c) => (c.ocspResponse ? [c.ocspResponse] : [])),
    crls: revocation.certificates.flatMap((c) => (c.crl ? [c.crl] : [])),
  };
}

/** Appends an invisible document timestamp from the `openssl ts` TSA (no DSS with it). */
async function appendDocumentTimestamp(file: string, from: OpensslPki = tsa): Promise<void> {
  const prepared = await preparePdfSignature(file, {
    documentTimestamp: true,
    signingTime: new Date(),
    contentsSize: 16 * 1024,
    tempDir: dir,
  });
  await embedSignature(prepared.path, prepared, opensslToken(from, prepared.documentDigest));
  fs.renameSync(prepared.path, file);
}

describe('levels from what the file holds', () => {
  const chain = () => [issued.der, pki.intermediate.der, pki.root.der];

  it('no signature timestamp: B-B', async () => {
    const [signature] = await verify(await signed('bb', { tsa: undefined }));
    expect(signature).toMatchObject({ timestampVerified: false, level: 'B-B' });
  });

  it('a timestamp and no DSS: B-T, although every source answers online (certificate valid)', async () => {
    const [signature] = await verify(await signed('bt'));
    expect(signature).toMatchObject({
      isValid: true,
      certificateStatus: 'valid',
      level: 'B-T',
    });
  });

  it('a chain naming no OCSP responder and no CRL, no DSS: B-T, never B-LT (a missing source is no answer)', async () => {
    const silentIntermediate = await pki.intermediateWithoutCrl();
    const silent = await pki.issue('Khong Nguon', { profile: 'leaf_none' });
    const file = await signed('silent', {
      signer: {
        certificate: silent.der,
        chain: [silentIntermediate.der],
        keyFile: silent.keyFile,
      },
    });
    expect(readDss(file).certificates).toHaveLength(0);
    const [signature] = await verify(file);
    expect(signature).toMatchObject({ isValid: true, level: 'B-T' });
  });

  it('a DSS lacking the answer for the intermediate: B-T', async () => {
    const full = await fullMaterial(chain());
    expect(full.crls).toHaveLength(1);
    const file = await signed('no-intermediate', { dss: { ...full, crls: [] } });
    const [signature] = await verify(file);
    expect(signature).toMatchObject({ isValid: true, level: 'B-T' });
  });

  it('a DSS lacking a certificate of the chain (the answers all there): B-T', async () => {
    const full = await fullMaterial(chain());
    const file = await signed('no-certificate', {
      signer: { ...signer, chain: [] },
      dss: { ...full, certificates: [issued.der, pki.root.der] },
    });
    const [signature] = await verify(file);
    expect(signature).toMatchObject({ level: 'B-T' });
  });

  it('a DSS with every certificate and answer: B-LT; a document timestamp before that DSS adds nothing', async () => {
    const file = await signed('blt', { dss: await fullMaterial(chain()) });
    expect((await verify(file))[0]).toMatchObject({ isValid: true, level: 'B-LT' });

    // Timestamped first, the DSS after: the timestamp covers no validation data.
    const late = await signed('ts-then-dss');
    await appendDocumentTimestamp(late);
    await appendDss(late, await fullMaterial(chain()));
    const [signature, stamp] = await verify(late);
    expect(stamp).toMatchObject({ isValid: true, subFilter: 'ETSI.RFC3161' });
    expect(signature).toMatchObject({ isValid: true, level: 'B-LT' });
  });

  it('a document timestamp over a complete DSS: B-LTA; one from an untrusted TSA: B-LT', async () => {
    const file = await signed('dss-then-ts', { dss: await fullMaterial(chain()) });
    const untrusted = target('untrusted-ts');
    fs.copyFileSync(file, untrusted);
    await appendDocumentTimestamp(file);
    const [signature, stamp] = await verify(file);
    expect(stamp).toMatchObject({ isValid: true, fieldName: 'DocumentTimestamp1' });
    expect(signature).toMatchObject({ isValid: true, level: 'B-LTA' });

    const other = createOpensslPki();
    try {
      await appendDocumentTimestamp(untrusted, other);
    } finally {
      other.remove();
    }
    const [kept, refused] = await verify(untrusted);
    expect(refused).toMatchObject({ isValid: false, certificateStatus: 'untrusted' });
    expect(kept).toMatchObject({ level: 'B-LT' });
  });
});

/**
 * Puts revocation values into a signed file's CMS, as other tools do: SignedData `crls` with the
 * CRLs and the OCSP answers (RFC 5940 id-ri-ocsp-response). The CMS is rebuilt from its own
 * bytes and written over the old one in the `/Contents` hole, which no byte range covers.
 */
function withCmsRevocationValues(file: string, values: Omit<DssMaterial, 'certificates'>): void {
  const [signature] = readSignatures(file).signatures;
  const cms = signature!.contents;
  const [type, explicit] = derChildren(cms, readDerWhole(cms));
  const fields = derChildren(cms, derChildren(cms, explicit!)[0]!).map((f) => derBytes(cms, f));
  const choices = [
    ...values.crls,
    ...values.ocspResponses.map((der) =>
      derElement(contextTag(1), derObjectIdentifier('1.3.6.1.5.5.7.16.2'), der),
    ),
  ].sort(compareDerEncodings);
  const signedData = derSequence(
    ...fields.slice(0, -1),
    derElement(contextTag(1), ...choices),
    fields.at(-1)!,
  );
  const rebuilt = Buffer.from(
    derSequence(derBytes(cms, type!), derElement(contextTag(0), signedData)),
  );
  const [, holeStart, holeEnd] = signature!.byteRange;
  const hex = rebuilt.toString('hex');
  const room = holeEnd - holeStart - 2;
  expect(hex.length).toBeLessThanOrEqual(room);
  const fd = fs.openSync(file, 'r+');
  try {
    fs.writeSync(fd, hex.padEnd(room, '0'), holeStart + 1, 'latin1');
  } finally {
    fs.closeSync(fd);
  }
}

describe('revocation values in the CMS itself', () => {
  const crlOf = (name: 'int' | 'root') => fs.readFileSync(path.join(pki.dir, `${name}.crl.der`));

  it('CRLs in SignedData count as the DSS does: B-LT without any DSS; pdfsig agrees the signature is intact', async () => {
    const file = await signed('cms-crls');
    expect((await verify(file))[0]).toMatchObject({ level: 'B-T' });
    // The leaf's CRL (the intermediate's) and the intermediate's (the root's).
    withCmsRevocationValues(file, { crls: [crlOf('int'), crlOf('root')], ocspResponses: [] });
    expect(readDss(file).certificates).toHaveLength(0);
    const [signature] = await verify(file);
    expect(signature).toMatchObject({
      isValid: true,
      integrityCheck: 'passed',
      certificateStatus: 'valid',
      level: 'B-LT',
    });
    const nss = nssTrusting(path.join(dir, 'nss-cms'), pki.root.certFile);
    const { stdout } = await run('pdfsig', ['-nssdir', nss, file]);
    expect(pdfsigSignatures(stdout)[0]).toMatchObject({ valid: true, trusted: true });
  });

  it('an OCSP answer as RFC 5940 otherRevInfo counts too (openssl cms reads it); one CRL short is B-T', async () => {
    const full = await fullMaterial([issued.der, pki.intermediate.der, pki.root.der]);
    const file = await signed('cms-ocsp');
    const short = target('cms-ocsp-short');
    fs.copyFileSync(file, short);
    withCmsRevocationValues(file, full);
    const [signature] = await verify(file);
    expect(signature).toMatchObject({ isValid: true, integrityCheck: 'passed', level: 'B-LT' });
    const cms = path.join(dir, 'cms-ocsp.der');
    fs.writeFileSync(cms, readSignatures(file).signatures[0]!.contents);
    const printed = await run('openssl', [
      'cms',
      '-cmsout',
      '-print',
      '-inform',
      'DER',
      '-in',
      cms,
    ]);
    // OpenSSL 3.0 has no name for id-ri-ocsp-response; the OCSPResponse under it parses.
    expect(printed.stdout).toMatch(/otherRevInfoFormat: .*\(1\.3\.6\.1\.5\.5\.7\.16\.2\)/);

    withCmsRevocationValues(short, { ...full, crls: [] });
    expect((await verify(short))[0]).toMatchObject({ isValid: true, level: 'B-T' });
  });
});

describe("Adobe's adbe-revocationInfoArchival signed attribute", () => {
  it('is read as revocation values of the CMS (CRLs under [0], OCSP answers under [1])', async () => {
    const full = await fullMaterial([issued.der, pki.intermediate.der, pki.root.der]);
    const attributes = buildSignedAttributes(Buffer.alloc(32, 7), issued.der);
    const ours = derChildren(attributes, readDerWhole(attributes)).map((member) =>
      derBytes(attributes, member),
    );
    const archival = derSequence(
      derObjectIdentifier('1.2.840.113583.1.1.8'),
      derSetOf([
        derSequence(
          derElement(contextTag(0), derSequence(...full.crls)),
          derElement(contextTag(1), derSequence(...full.ocspResponses)),
        ),
      ]),
    );
    const cms = assembleSignedData({
      signedAttributes: derSetOf([...ours, archival]),
      signature: Buffer.alloc(64, 1),
      signatureAlgorithm: 'ecdsaSha256',
      certificates: [issued.der, pki.intermediate.der],
    });
    const parsed = parseSignedData(cms);
    expect(parsed.revocationValues.crls.map((der) => der.toString('hex'))).toEqual(
      full.crls.map((der) => der.toString('hex')),
    );
    expect(parsed.revocationValues.ocspResponses.map((der) => der.toString('hex'))).toEqual(
      full.ocspResponses.map((der) => der.toString('hex')),
    );
  });
});

describe('archivePdf: the archive revision of a finished document', () => {
  it('adds the DSS for every chain and a document timestamp: B-LTA for pdfsig, openssl ts and verify', async () => {
    const first = await signed('archive-source');
    const archived = await archivePdf(h.deps, first, { tenantId: null, stored: [] });
    try {
      const report = readSignatures(archived.path);
      expect(report.signatures.map((s) => [s.fieldName, s.type, s.subFilter])).toEqual([
        ['Signature1', 'signature', 'ETSI.CAdES.detached'],
        ['DocumentTimestamp1', 'timestamp', 'ETSI.RFC3161'],
      ]);
      expect(report.signatures[1]!.coversWholeFile).toBe(true);
      expect(archived.summary).toMatchObject({
        fieldName: 'DocumentTimestamp1',
        levels: { Signature1: 'B-LTA' },
      });
      // The DSS went into the timestamped revision: the signer's and the intermediate's answers.
      const dss = readDss(archived.path);
      expect(dss.ocspResponses.length).toBeGreaterThanOrEqual(1);
      expect(dss.crls.length).toBeGreaterThanOrEqual(1);
      const [signature, stamp] = await verify(archived.path);
      expect(signature).toMatchObject({ isValid: true, level: 'B-LTA' });
      expect(stamp).toMatchObject({ isValid: true, timestampVerified: true, level: 'B-T' });

      // pdfsig lists it (poppler validates no RFC 3161 timestamp); the signature stays valid.
      const nss = nssTrusting(path.join(dir, 'nss-archive'), pki.root.certFile);
      const { stdout } = await run('pdfsig', ['-nssdir', nss, archived.path]);
      const [ours, theirs] = pdfsigSignatures(stdout);
      expect(ours).toMatchObject({ valid: true });
      expect(theirs!.text).toContain('Signature Field Name: DocumentTimestamp1');
      expect(theirs).toMatchObject({ total: true });

      // openssl ts -verify over the byte range, with the development TSA's CA.
      const stampInfo = report.signatures[1]!;
      const bytes = fs.readFileSync(archived.path);
      const [a, b, c, d] = stampInfo.byteRange;
      const data = path.join(dir, 'archive-range.bin');
      const token = path.join(dir, 'archive-token.der');
      fs.writeFileSync(data, Buffer.concat([bytes.subarray(a, a + b), bytes.subarray(c, c + d)]));
      fs.writeFileSync(token, stampInfo.contents);
      const caFile = await writeDevelopmentCaPem(h.deps.db, path.join(dir, 'dev-ca.pem'));
      const openssl = await run('openssl', [
        'ts',
        '-verify',
        '-data',
        data,
        '-in',
        token,
        '-token_in',
        '-CAfile',
        caFile,
      ]);
      expect(openssl.stdout).toContain('Verification: OK');
    } finally {
      fs.rmSync(archived.path, { force: true });
    }
  });
});
