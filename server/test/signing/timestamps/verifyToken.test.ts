import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { derOfPemFile } from '../../../../test/support/openssl';
import {
  createOpensslPki,
  type OpensslPki,
  opensslQuery,
  opensslReply,
  opensslTokenOf,
} from '../../../../test/support/opensslTsa';
import { timestampResponse } from '../../../src/dev/tsaResponder';
import { ManualClock } from '../../../src/platform/clock';
import { verifyTimestampToken } from '../../../src/signing/timestamps/verifyToken';

let pki: OpensslPki;
let digest: Buffer;
let token: Buffer;

beforeAll(() => {
  pki = createOpensslPki();
  digest = crypto.createHash('sha256').update('the signature value').digest();
  token = opensslTokenOf(pki, opensslReply(pki, opensslQuery(pki, digest.toString('hex'))));
});
afterAll(() => pki.remove());

const options = () => ({ imprint: digest, trustAnchors: [pki.rootDer], clockSkewMs: 5_000 });

function failureOf(run: () => unknown): { detailCode: string; message: string } {
  try {
    run();
  } catch (error) {
    expect(error).toMatchObject({ code: 'TIMESTAMP_INVALID' });
    return error as { detailCode: string; message: string };
  }
  throw new Error('the token was accepted');
}

const reasonOf = (run: () => unknown): string => failureOf(run).detailCode;

describe('verifyTimestampToken on tokens of openssl ts', () => {
  it('accepts a token over the imprint from a TSA chaining to an anchor', () => {
    const verified = verifyTimestampToken(token, options());
    expect(Math.abs(verified.genTime.getTime() - Date.now())).toBeLessThan(60_000);
    expect(verified.tsaCertificate.equals(derOfPemFile(pki.tsa.certificate))).toBe(true);
    expect(verified.serialNumber).toMatch(/^[0-9a-f]+$/);
    expect(verified.nonce).toBeDefined();
  });

  it('refuses another imprint (IMPRINT_MISMATCH)', () => {
    const other = crypto.createHash('sha256').update('another signature').digest();
    expect(reasonOf(() => verifyTimestampToken(token, { ...options(), imprint: other }))).toBe(
      'IMPRINT_MISMATCH',
    );
  });

  it('refuses an imprint that is not SHA-256 (IMPRINT_ALGORITHM)', () => {
    const file = path.join(pki.dir, 'sha512.tsq');
    execFileSync(
      'openssl',
      [
        'ts',
        '-query',
        '-digest',
        crypto.createHash('sha512').update('x').digest('hex'),
        '-sha512',
        '-cert',
        '-out',
        file,
        // openssl ts writes "Using configuration from ..." to stderr: keep it out of the test log.
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const sha512Token = opensslTokenOf(pki, opensslReply(pki, fs.readFileSync(file)));
    expect(reasonOf(() => verifyTimestampToken(sha512Token, options()))).toBe('IMPRINT_ALGORITHM');
  });

  it('refuses a token whose signature bytes were changed (SIGNATURE_INVALID)', () => {
    const tampered = Buffer.from(token);
    tampered[tampered.length - 1]! ^= 0x01;
    expect(reasonOf(() => verifyTimestampToken(tampered, options()))).toBe('SIGNATURE_INVALID');
  });

  it('refuses a token whose genTime was changed (MESSAGE_DIGEST_MISMATCH)', () => {
    // GeneralizedTime YYYYMMDDHHMMSSZ: tag 0x18, length 15; move the seconds' last digit.
    const at = token.findIndex(
      (byte, i) => byte === 0x18 && token[i + 1] === 0x0f && token[i + 16] === 0x5a,
    );
    expect(at).toBeGreaterThan(0);
    const tampered = Buffer.from(token);
    tampered[at + 15] = tampered[at + 15] === 0x30 ? 0x31 : 0x30;
    expect(reasonOf(() => verifyTimestampToken(tampered, options()))).toBe(
      'MESSAGE_DIGEST_MISMATCH',
    );
  });

  it('refuses bytes that are not a CMS token (MALFORMED)', () => {
    expect(reasonOf(() => verifyTimestampToken(Buffer.from('garbage'), options()))).toBe(
      'MALFORMED',
    );
    expect(
      reasonOf(() => verifyTimestampToken(token.subarray(0, token.length - 10), options())),
    ).toBe('MALFORMED');
  });

  it('refuses a CMS signature over other content (NOT_TST_INFO)', () => {
    const data = path.join(pki.dir, 'data.txt');
    fs.writeFileSync(data, 'not a TSTInfo');
    const cms = execFileSync('openssl', [
      'cms',
      '-sign',
      '-binary',
      '-nodetach',
      '-in',
      data,
      '-signer',
      pki.tsa.certificate,
      '-inkey',
      pki.tsa.key,
      '-outform',
      'DER',
    ]);
    expect(reasonOf(() => verifyTimestampToken(cms, options()))).toBe('NOT_TST_INFO');
  });

  it('refuses a TSA that chains to no anchor (TSA_UNTRUSTED)', () => {
    expect(
      reasonOf(() =>
        verifyTimestampToken(token, { ...options(), trustAnchors: [pki.otherRootDer] }),
      ),
    ).toBe('TSA_UNTRUSTED');
    expect(reasonOf(() => verifyTimestampToken(token, { ...options(), trustAnchors: [] }))).toBe(
      'TSA_UNTRUSTED',
    );
  });

  it('refuses a TSA whose issuer is not a CA (TSA_ISSUER_NOT_CA)', () => {
    const query = opensslQuery(pki, digest.toString('hex'));
    const underNonCa = opensslTokenOf(pki, opensslReply(pki, query, pki.tsaUnderNonCa));
    const failure = failureOf(() => verifyTimestampToken(underNonCa, options()));
    expect(failure.detailCode).toBe('TSA_ISSUER_NOT_CA');
    expect(failure.message).toMatch(/"CN=Not a CA" is not a CA allowed to sign certificates/);
  });

  it('refuses a TSA path longer than an issuer’s pathLenConstraint (TSA_ISSUER_NOT_CA)', () => {
    const query = opensslQuery(pki, digest.toString('hex'));
    const tooLong = opensslTokenOf(pki, opensslReply(pki, query, pki.tsaPathTooLong));
    const failure = failureOf(() => verifyTimestampToken(tooLong, options()));
    expect(failure.detailCode).toBe('TSA_ISSUER_NOT_CA');
    // Told apart from a non-CA issuer by buildChain's message.
    expect(failure.message).toMatch(
      /allows 0 intermediate certificate\(s\) below it, the chain has 1/,
    );
  });

  it('checks genTime against [notBefore - skew, notAfter + skew]', () => {
    const genTime = verifyTimestampToken(token, options()).genTime.getTime();
    const at = (ms: number) => new Date(genTime + ms);
    expect(() =>
      verifyTimestampToken(token, { ...options(), notBefore: at(4_000), notAfter: at(-4_000) }),
    ).not.toThrow();
    expect(
      reasonOf(() => verifyTimestampToken(token, { ...options(), notBefore: at(6_000) })),
    ).toBe('GEN_TIME_OUTSIDE_WINDOW');
    expect(
      reasonOf(() => verifyTimestampToken(token, { ...options(), notAfter: at(-6_000) })),
    ).toBe('GEN_TIME_OUTSIDE_WINDOW');
  });
});

describe('verifyTimestampToken on tokens of our responder with test identities', () => {
  const signerOf = (identity: { certificate: string; key: string }) => ({
    certificateChain: [derOfPemFile(identity.certificate), pki.rootDer],
    sign: async (data: Buffer) =>
      crypto.sign('sha256', data, crypto.createPrivateKey(fs.readFileSync(identity.key))),
  });
  const tokenOf = async (clock: ManualClock, tsaSigner: ReturnType<typeof signerOf>) => {
    const reply = await timestampResponse(
      { clock, tsaSigner },
      opensslQuery(pki, digest.toString('hex')),
    );
    return opensslTokenOf(pki, reply);
  };

  it('refuses a genTime outside the TSA certificate validity (TSA_CERTIFICATE_NOT_VALID)', async () => {
    const later = await tokenOf(
      new ManualClock(new Date(Date.now() + 365 * 86_400_000)),
      signerOf(pki.tsa),
    );
    expect(reasonOf(() => verifyTimestampToken(later, options()))).toBe(
      'TSA_CERTIFICATE_NOT_VALID',
    );
  });

  it('refuses a TSA certificate without the critical timeStamping EKU (TSA_EKU_INVALID)', async () => {
    const nonCritical = await tokenOf(new ManualClock(new Date()), signerOf(pki.tsaNonCriticalEku));
    expect(reasonOf(() => verifyTimestampToken(nonCritical, options()))).toBe('TSA_EKU_INVALID');
  });

  it('refuses a token signed with a key that is not the certificate’s (SIGNATURE_INVALID)', async () => {
    const wrongKey = await tokenOf(new ManualClock(new Date()), {
      ...signerOf(pki.tsa),
      sign: signerOf(pki.tsaUntrusted).sign,
    });
    expect(reasonOf(() => verifyTimestampToken(wrongKey, options()))).toBe('SIGNATURE_INVALID');
  });

  it('refuses a token whose ESS signing-certificate names another certificate', async () => {
    // The certificate hash in signing-certificate-v2 replaced: the binding to the TSA
    // certificate is checked before (and apart from) the signature.
    const reply = await timestampResponse(
      { clock: new ManualClock(new Date()), tsaSigner: signerOf(pki.tsa) },
      opensslQuery(pki, digest.toString('hex')),
    );
    const swapped = opensslTokenOf(pki, reply);
    const honest = derOfPemFile(pki.tsa.certificate);
    const hash = crypto.createHash('sha256').update(honest).digest();
    const at = swapped.indexOf(hash);
    expect(at).toBeGreaterThan(0);
    const tampered = Buffer.from(swapped);
    crypto.randomBytes(32).copy(tampered, at);
    expect(reasonOf(() => verifyTimestampToken(tampered, options()))).toBe(
      'SIGNING_CERTIFICATE_MISMATCH',
    );
  });
});
