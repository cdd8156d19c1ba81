/**
 * Issue 8's acceptance run: three sequential signatures on one document, each valid in tools
 * we did not write. (a) RSA-2048 on a SoftHSM2 token, (b) ECDSA P-256 on the same token sent as
 * raw r||s, both through finalizeWithToken as a partner's token client would send them, (c) the
 * service seal through signWithServerKey. Production-like: APP_ENV production, the test CA a
 * global trust anchor, TSA_URL an `openssl ts` TSA behind an HTTPS wrapper, OCSP answered by
 * `openssl ocsp`. Then pdfsig (NSS trusting the test CA), openssl cms and ts, the DSS, and the
 * same on every PDF of the corpus.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { buildSignedAttributes, ecdsaRawSignatureToDer } from '@esign/shared/cms';
import type { TestHttpsServer } from '../../../test/support/httpsServer';
import { opensslReply, sendReply, startTsaServer } from '../../../test/support/opensslTsa';
import { provisionSoftHsm, tempDir } from '../../../test/support/tools';
import { importCertificate } from '../../src/keys/certificates';
import { sealCertificateRequest, sealKey } from '../../src/keys/signingKeys';
import { readDss, readSignatures } from '../../src/pdf/signing';
import {
  type FinalizeResult,
  finalizeWithToken,
  prepareRevision,
  signWithServerKey,
} from '../../src/signatures';
import { readCertificate } from '../../src/signing/certificates/certificate';
import { ocspResponseConcerns } from '../../src/signing/certificates/ocsp';
import { certifiedKey, type SigningKey } from '../../src/signing/keys/signingKey';
import { requestTimestamp } from '../../src/signing/timestamps/client';
import { verifyPdfSignatures } from '../../src/signing/verification';
import { localStoreOf } from '../../src/storage/localFileStore';
import { addTrustAnchor } from '../../src/trust/service';
import { repoRoot } from '../admin/runCli';
import type { Issued } from './certificates/testPki';
import { TestPki as ForeignPki } from './cms/testPki';
import { createWorld, opensslVerdicts, useTools, type World } from './finalize/world';
import { opensslP12, signWithSignpdf } from './foreignSigners';
import { startTokenClient, type TokenClient } from './keys/tokenClient';
import {
  acroFormPdf,
  classicPdf,
  hybridPdf,
  nssDatabase,
  objectStreamPdf,
  pdfsigSignatures,
  pdfsigTrusting,
} from './pdf/corpus';

jest.setTimeout(120_000);

const tools = useTools();
const hour = 3600_000;
const token = { label: 'acceptance', pin: '1234', soPin: '5678' };

/** Everything the documents share: the world, the token and its certificates, TSA, NSS db. */
let world: World;
let tsaServer: TestHttpsServer;
let tokenClient: TokenClient;
let softHsm: { dir: string; remove(): void };
let rsaCertificate: Issued;
let ecCertificate: Issued;
let seal: SigningKey;
let nssDir: string;
/** The CA of the @signpdf signer (another software's PKI), trusted by pdfsig too. */
let foreignPki: ForeignPki;

beforeAll(async () => {
  const { pki, tsa } = tools;
  tsaServer = await startTsaServer({
    '/tsa': (query, _request, response) => sendReply(response, opensslReply(tsa, query)),
  });
  world = await createWorld(tools, {
    env: { APP_ENV: 'production', TSA_URL: tsaServer.url('/tsa') },
    trustSignerRoot: false,
  });
  await addTrustAnchor(world.h.deps.db, world.h.now(), {
    tenantId: null,
    certificateFile: pki.root.der,
  });

  softHsm = tempDir('esign-acceptance-hsm-');
  const { config } = provisionSoftHsm(softHsm.dir, [token]);
  tokenClient = startTokenClient(config, token, repoRoot);
  const rsa = await tokenClient.generate('signer-rsa', 'rsa-2048', 'Nguyen Van A');
  rsaCertificate = await pki.certify(rsa.csr);
  const ec = await tokenClient.generate('signer-ec', 'ec-p256', 'Tran Thi B');
  ecCertificate = await pki.certify(ec.csr);

  // The seal the CSR way, as in production: the key store's CSR, the CA's answer imported.
  const key = await sealKey(world.deps);
  const sealIssued = await pki.certify(await sealCertificateRequest(world.deps, key));
  seal = await importCertificate(world.deps, key.id, `${sealIssued.pem}\n${pki.intermediate.pem}`);

  foreignPki = new ForeignPki();
  await addTrustAnchor(world.h.deps.db, world.h.now(), {
    tenantId: null,
    certificateFile: fs.readFileSync(foreignPki.file('ca.pem')),
  });
  nssDir = nssDatabase(path.join(tools.dir, 'nss'), [pki.root.certFile, foreignPki.file('ca.pem')]);
}, 180_000);

afterAll(async () => {
  await tokenClient?.close();
  softHsm?.remove();
  await world?.h.close();
  await tsaServer?.close();
  foreignPki?.remove();
});

const sha256 = (bytes: Uint8Array) => crypto.createHash('sha256').update(bytes).digest();
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

/** A corpus PDF into the FileStore: its SHA-256 there. */
async function store(pdf: Buffer, name: string): Promise<string> {
  const file = path.join(tools.dir, `${name}-${crypto.randomUUID()}.pdf`);
  fs.writeFileSync(file, pdf);
  const stored = await world.h.deps.files.put(file);
  world.h.deps.files.keep(stored);
  fs.rmSync(file);
  return stored.sha256;
}

function prepareOn(sourceSha256: string, signerName: string, signerChain?: Buffer[]) {
  return prepareRevision(world.deps, {
    tenantId: world.tenantId,
    sourceSha256,
    signingTime: new Date(),
    signerName,
    reason: 'Ký hợp đồng',
    expiresAt: new Date(Date.now() + hour),
    ...(signerChain ? { signerChain } : {}),
  });
}

const options = { tenantId: 0, commit: async () => undefined };

/**
 * One signature from the token, as a token client does it: the shared attribute builder, the
 * token's signature (RSA as is; ECDSA raw r||s), a timestamp from the TSA over SHA-256 of the
 * signature value (its DER form for ECDSA), then finalizeWithToken.
 */
async function signWithToken(
  sourceSha256: string,
  keyLabel: string,
  certificate: Issued,
): Promise<FinalizeResult<undefined>> {
  const preparation = await prepareOn(sourceSha256, keyLabel);
  const digest = Buffer.from(preparation.contractHash.slice('sha256:'.length), 'hex');
  const attributes = buildSignedAttributes(digest, certificate.der);
  const signature = await tokenClient.sign(keyLabel, attributes);
  const stamped = keyLabel === 'signer-ec' ? ecdsaRawSignatureToDer(signature) : signature;
  const timestamp = await requestTimestamp(world.deps, sha256(stamped), {
    trustAnchors: (await world.deps.trust(world.tenantId)).timestampAnchors,
  });
  return finalizeWithToken(
    world.deps,
    preparation.id,
    {
      signedHash: b64(signature),
      certificateChain: [certificate.der, tools.pki.intermediate.der].map(b64),
      timestampToken: b64(timestamp.token),
    },
    { ...options, tenantId: world.tenantId },
  );
}

/** (a) RSA from the token, (b) ECDSA raw r||s from the token, (c) the seal; each on the last. */
async function signThreeTimes(sourceSha256: string) {
  const rsa = await signWithToken(sourceSha256, 'signer-rsa', rsaCertificate);
  const ec = await signWithToken(rsa.sha256, 'signer-ec', ecCertificate);
  const chain = certifiedKey(seal).chain;
  const sealPreparation = await prepareOn(ec.sha256, 'Con dấu dịch vụ', chain);
  const sealed = await signWithServerKey(world.deps, sealPreparation.id, seal, {
    ...options,
    tenantId: world.tenantId,
  });
  return {
    results: [rsa, ec, sealed],
    file: localStoreOf(world.h.deps.files).pathOf(sealed.sha256),
  };
}

/**
 * Every check of the acceptance criteria on a file signed by signThreeTimes; `earlier`
 * signatures were in the file before ours (pdfsig must still find them valid and trusted).
 */
async function expectAcceptedEverywhere(
  file: string,
  results: FinalizeResult<undefined>[],
  earlier = 0,
) {
  const { pki, tsa, dir } = tools;
  const report = await pdfsigTrusting(file, nssDir);
  const verdicts = pdfsigSignatures(report);
  expect(verdicts.map(({ valid, trusted, total }) => ({ valid, trusted, total }))).toEqual(
    Array.from({ length: earlier + 3 }, (_, index) => ({
      valid: true,
      trusted: true,
      total: index === earlier + 2,
    })),
  );
  expect(report.match(/Not total document signed/g)?.length).toBe(2 + earlier);

  const signatures = readSignatures(file).signatures;
  expect(signatures).toHaveLength(3 + earlier);
  for (const index of [0, 1, 2]) {
    const openssl = opensslVerdicts(dir, file, earlier + index, {
      signerCa: pki.root.der,
      tsaCa: tsa.rootDer,
    });
    expect(openssl.cms).toContain('Verification successful');
    expect(openssl.ts).toContain('Verification: OK');
  }

  // The DSS (in the revisions the later signatures cover) answers for every signer.
  const dss = readDss(file);
  const intermediate = readCertificate(pki.intermediate.der);
  for (const signer of [rsaCertificate.der, ecCertificate.der, certifiedKey(seal).certificate]) {
    const certificate = readCertificate(signer);
    expect(
      dss.ocspResponses.filter((der) => ocspResponseConcerns(der, certificate, intermediate)),
    ).toHaveLength(1);
  }
  // Our own verification agrees: every signature intact, trusted, timestamped.
  const verification = await verifyPdfSignatures(world.deps, file, {
    tenantId: world.tenantId,
  });
  const ours = verification.signatures.slice(earlier);
  expect(
    ours.map(({ isValid, integrityCheck, certificateStatus, timestampVerified }) => ({
      isValid,
      integrityCheck,
      certificateStatus,
      timestampVerified,
    })),
  ).toEqual(
    Array.from({ length: 3 }, () => ({
      isValid: true,
      integrityCheck: 'passed',
      certificateStatus: 'valid',
      timestampVerified: true,
    })),
  );
  expect(ours.map((signature) => signature.coversWholeDocument)).toEqual([false, false, true]);
  for (const signature of verification.signatures.slice(0, earlier)) {
    expect(signature).toMatchObject({
      isValid: true,
      integrityCheck: 'passed',
      certificateStatus: 'valid',
      modifiedAfterSigning: 'allowed',
    });
  }
  expect(results.map((result) => result.summary.level)).toEqual(['B-T', 'B-T', 'B-LT']);
  expect(results.map((result) => result.summary.trusted)).toEqual([true, true, true]);
  expect(results.map((result) => result.summary.signatureAlgorithm)).toEqual([
    'rsaPkcs1Sha256',
    'ecdsaSha256',
    'rsaPkcs1Sha256',
  ]);
}

describe('three sequential signatures: SoftHSM RSA, SoftHSM ECDSA raw r||s, the seal', () => {
  it('pdfsig, openssl cms and openssl ts accept each; the DSS answers for every signer', async () => {
    const { results, file } = await signThreeTimes(await store(tools.contract, 'contract'));
    await expectAcceptedEverywhere(file, results);
  });
});

describe('the same three signatures on each PDF of the corpus', () => {
  it.each([
    ['an xref stream with object streams', objectStreamPdf],
    ['a hybrid-reference file', async () => hybridPdf()],
    ['an AcroForm with filled fields', acroFormPdf],
    ['a 200-page file', () => classicPdf(200)],
  ])('%s', async (name, make) => {
    const { results, file } = await signThreeTimes(await store(await make(), name));
    await expectAcceptedEverywhere(file, results);
  });

  it('a PDF already signed by @signpdf: its signature stays valid', async () => {
    const source = path.join(tools.dir, 'signpdf-source.pdf');
    const signedBySignpdf = path.join(tools.dir, 'signpdf.pdf');
    fs.writeFileSync(source, await classicPdf(2));
    await signWithSignpdf(source, signedBySignpdf, {
      p12Path: opensslP12(foreignPki, 'signpdf-signer', 'test-passphrase'),
      passphrase: 'test-passphrase',
    });
    const { results, file } = await signThreeTimes(
      await store(fs.readFileSync(signedBySignpdf), 'signpdf'),
    );
    await expectAcceptedEverywhere(file, results, 1);
    expect(readSignatures(file).signatures[0]!.subFilter).toBe('adbe.pkcs7.detached');
  });
});
