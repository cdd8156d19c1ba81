import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { CodedError } from '@esign/shared';
import {
  buildChain,
  checkSignerCertificate,
  signerCertificateError,
} from '../../../src/signing/certificates';
import { opensslDate, selfSigned, signedBy, TestPki } from './testPki';

const run = promisify(execFile);
const day = 24 * 3600_000;

let pki: TestPki;
beforeAll(async () => {
  pki = await TestPki.create();
}, 60_000);
afterAll(async () => {
  await pki?.close();
});

describe('buildChain: signer → intermediates → trust anchor', () => {
  it('orders the chain signer first and anchor last, whatever order the certificates came in', async () => {
    const leaf = await pki.issue('Alice');
    const built = buildChain(
      leaf.der,
      [pki.root.der, pki.intermediate.der, leaf.der],
      [pki.root.der],
    );
    expect(built).toEqual({ ok: true, chain: [leaf.der, pki.intermediate.der, pki.root.der] });
    // openssl agrees that this chain verifies.
    const { stdout } = await run('openssl', [
      'verify',
      '-CAfile',
      pki.root.certFile,
      '-untrusted',
      pki.intermediate.certFile,
      leaf.certFile,
    ]);
    expect(stdout).toContain('OK');
  });

  it('accepts an intermediate that is itself a trust anchor', async () => {
    const leaf = await pki.issue('Bob');
    expect(buildChain(leaf.der, [], [pki.intermediate.der])).toEqual({
      ok: true,
      chain: [leaf.der, pki.intermediate.der],
    });
  });

  it('names an untrusted root', async () => {
    const leaf = await pki.issue('Carol');
    const other = await selfSigned(pki.dir, 'other-root', 'Other Root', 'ec');
    const built = buildChain(leaf.der, [pki.intermediate.der, pki.root.der], [other.der]);
    expect(built).toMatchObject({ ok: false, reason: 'untrusted_root' });
    if (!built.ok) expect(built.message).toContain('Test Root CA');
  });

  it('names a missing intermediate', async () => {
    const leaf = await pki.issue('Dave');
    const built = buildChain(leaf.der, [], [pki.root.der]);
    expect(built).toMatchObject({ ok: false, reason: 'missing_intermediate' });
    if (!built.ok) expect(built.message).toContain('Test Intermediate CA');
  });

  it('refuses a chain that does not start at the signer', async () => {
    const leaf = await pki.issue('Erin');
    const someoneElse = await pki.issue('Mallory');
    const built = buildChain(leaf.der, [someoneElse.der, pki.intermediate.der], [pki.root.der]);
    expect(built).toMatchObject({ ok: false, reason: 'chain_not_ending_at_signer' });
  });

  it('refuses an issuer look-alike whose key did not sign (same name and key id)', async () => {
    const leaf = await pki.issue('Frank');
    // The look-alike copies the intermediate's name and subjectKeyIdentifier, not its key.
    const skiHex = (
      await run('openssl', [
        'x509',
        '-in',
        pki.intermediate.certFile,
        '-noout',
        '-ext',
        'subjectKeyIdentifier',
      ])
    ).stdout
      .split('\n')[1]!
      .trim();
    const lookAlike = await signedBy(pki.dir, pki.root, 'look-alike', 'Test Intermediate CA', {
      ec: true,
      ext: `basicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=${skiHex}`,
    });
    const built = buildChain(leaf.der, [lookAlike.der], [pki.root.der]);
    expect(built).toMatchObject({ ok: false, reason: 'signature_mismatch' });
    // With the real intermediate also given, the path through it is found.
    expect(buildChain(leaf.der, [lookAlike.der, pki.intermediate.der], [pki.root.der]).ok).toBe(
      true,
    );
  });

  it('refuses an issuer that is not a CA', async () => {
    const notCa = await signedBy(pki.dir, pki.root, 'not-a-ca', 'Not A CA', {
      ec: true,
      ext: 'basicConstraints=critical,CA:false\nkeyUsage=critical,digitalSignature',
    });
    const leaf = await signedBy(pki.dir, notCa, 'under-not-ca', 'Grace', {
      ec: true,
      ext: 'basicConstraints=critical,CA:false\nkeyUsage=critical,digitalSignature',
    });
    expect(buildChain(leaf.der, [notCa.der], [pki.root.der])).toMatchObject({
      ok: false,
      reason: 'issuer_not_ca',
    });
  });

  it('refuses more intermediates than a pathLenConstraint allows', async () => {
    const strict = await selfSigned(pki.dir, 'strict-root', 'Strict Root', 'ec', 0);
    const sub = await signedBy(pki.dir, strict, 'strict-sub', 'Strict Sub CA', {
      ec: true,
      ext: 'basicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign',
    });
    const leaf = await signedBy(pki.dir, sub, 'strict-leaf', 'Uma', {
      ec: true,
      ext: 'basicConstraints=critical,CA:false\nkeyUsage=critical,digitalSignature',
    });
    expect(buildChain(leaf.der, [sub.der], [strict.der])).toMatchObject({
      ok: false,
      reason: 'path_too_long',
    });
    // A leaf right under the root is within pathlen:0.
    const direct = await signedBy(pki.dir, strict, 'strict-direct', 'Victor', {
      ec: true,
      ext: 'basicConstraints=critical,CA:false\nkeyUsage=critical,digitalSignature',
    });
    expect(buildChain(direct.der, [], [strict.der]).ok).toBe(true);
  });

  it('answers a garbage certificate with 422 CERTIFICATE_INVALID', () => {
    expect(() => buildChain(Buffer.from('not a certificate'), [], [pki.root.der])).toThrow(
      expect.objectContaining({ code: 'CERTIFICATE_INVALID' }),
    );
  });
});

describe('checkSignerCertificate at the timestamp time', () => {
  const anchors = (): Buffer[] => [pki.root.der];

  it('is valid within the validity of every certificate, with the anchored chain', async () => {
    const leaf = await pki.issue('Heidi');
    const check = checkSignerCertificate({
      chain: [leaf.der, pki.intermediate.der],
      at: new Date(),
      anchors: anchors(),
    });
    expect(check).toEqual({
      status: 'valid',
      chain: [leaf.der, pki.intermediate.der, pki.root.der],
    });
  });

  it('is expired after notAfter, and not_yet_valid before notBefore', async () => {
    const leaf = await pki.issue('Ivan');
    const chain = [leaf.der, pki.intermediate.der];
    const later = checkSignerCertificate({
      chain,
      at: new Date(Date.now() + 60 * day),
      anchors: anchors(),
    });
    expect(later).toMatchObject({ status: 'expired', index: 0 });
    const earlier = checkSignerCertificate({
      chain,
      at: new Date(Date.now() - day),
      anchors: anchors(),
    });
    expect(earlier).toMatchObject({ status: 'not_yet_valid', index: 0 });
  });

  it('judges an already expired leaf expired at the time t given', async () => {
    const now = Date.now();
    const leaf = await pki.issue('Judy', {
      startDate: opensslDate(new Date(now - 3 * day)),
      endDate: opensslDate(new Date(now - day)),
    });
    const check = checkSignerCertificate({
      chain: [leaf.der, pki.intermediate.der],
      at: new Date(now),
      anchors: anchors(),
    });
    expect(check).toMatchObject({ status: 'expired', index: 0 });
    if (check.status === 'expired') expect(check.message).toContain('expired at');
  });

  it('judges a leaf that starts later not_yet_valid', async () => {
    const now = Date.now();
    const leaf = await pki.issue('Ken', {
      startDate: opensslDate(new Date(now + 2 * day)),
      endDate: opensslDate(new Date(now + 20 * day)),
    });
    const check = checkSignerCertificate({
      chain: [leaf.der, pki.intermediate.der],
      at: new Date(now),
      anchors: anchors(),
    });
    expect(check).toMatchObject({ status: 'not_yet_valid', index: 0 });
  });

  it('refuses a key that may not sign documents (keyUsage keyEncipherment only)', async () => {
    const leaf = await pki.issue('Leo', { profile: 'leaf_encipher' });
    expect(
      checkSignerCertificate({
        chain: [leaf.der, pki.intermediate.der],
        at: new Date(),
        anchors: anchors(),
      }),
    ).toMatchObject({ status: 'wrong_key_usage' });
  });

  it('accepts nonRepudiation alone', async () => {
    const leaf = await pki.issue('Mia', { profile: 'leaf_none' });
    expect(
      checkSignerCertificate({
        chain: [leaf.der, pki.intermediate.der],
        at: new Date(),
        anchors: anchors(),
      }).status,
    ).toBe('valid');
  });

  it('is untrusted with the chain reason when no anchor is reached', async () => {
    const leaf = await pki.issue('Nina');
    const check = checkSignerCertificate({
      chain: [leaf.der, pki.intermediate.der, pki.root.der],
      at: new Date(),
      anchors: [],
    });
    expect(check).toMatchObject({ status: 'untrusted', reason: 'untrusted_root' });
  });

  it('refuses an empty chain', () => {
    expect(() => checkSignerCertificate({ chain: [], at: new Date(), anchors: anchors() })).toThrow(
      expect.objectContaining({ code: 'CERTIFICATE_CHAIN_EMPTY' }),
    );
  });
});

/** The trust policies of a production service and of a development or sandbox one. */
const production = { acceptUntrustedSigners: false };
const development = { acceptUntrustedSigners: true };

describe('Untrusted chains per trust policy', () => {
  it('production refuses untrusted with 422 CERTIFICATE_UNTRUSTED; development and sandbox go on', async () => {
    const leaf = await pki.issue('Oscar');
    const check = checkSignerCertificate({
      chain: [leaf.der, pki.intermediate.der],
      at: new Date(),
      anchors: [],
    });
    expect(check.status).toBe('untrusted');
    const refused = signerCertificateError(check, production);
    expect(refused).toBeInstanceOf(CodedError);
    expect(refused).toMatchObject({
      code: 'CERTIFICATE_UNTRUSTED',
      field: 'certificateChain',
    });
    expect(signerCertificateError(check, development)).toBeNull();
    expect(signerCertificateError(check, development)).toBeNull();
  });

  it('refuses a chain for another signer in every environment, with its own code', async () => {
    const leaf = await pki.issue('Peggy');
    const other = await pki.issue('Trudy');
    const check = checkSignerCertificate({
      chain: [leaf.der, other.der, pki.intermediate.der],
      at: new Date(),
      anchors: [pki.root.der],
    });
    expect(check).toMatchObject({ status: 'untrusted', reason: 'chain_not_ending_at_signer' });
    for (const policy of [production, development]) {
      expect(signerCertificateError(check, policy)).toMatchObject({
        code: 'CERTIFICATE_CHAIN_INVALID',
      });
    }
  });

  it('gives expired, not yet valid and wrong key usage distinct codes', async () => {
    const leaf = await pki.issue('Rupert', { profile: 'leaf_encipher' });
    const wrong = checkSignerCertificate({
      chain: [leaf.der],
      at: new Date(),
      anchors: [pki.intermediate.der],
    });
    expect(signerCertificateError(wrong, development)?.code).toBe('CERTIFICATE_KEY_USAGE');
    const valid = await pki.issue('Sybil');
    const expired = checkSignerCertificate({
      chain: [valid.der],
      at: new Date(Date.now() + 90 * day),
      anchors: [pki.intermediate.der],
    });
    expect(signerCertificateError(expired, development)?.code).toBe('CERTIFICATE_EXPIRED');
    const early = checkSignerCertificate({
      chain: [valid.der],
      at: new Date(Date.now() - 2 * day),
      anchors: [pki.intermediate.der],
    });
    expect(signerCertificateError(early, production)?.code).toBe('CERTIFICATE_NOT_YET_VALID');
  });
});
