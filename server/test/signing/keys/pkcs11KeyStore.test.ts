import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as x509 from '@peculiar/x509';
import {
  attempt,
  derToPem,
  opensslVerifies,
  provisionSoftHsm,
  softHsmModule,
  tempDir,
} from '../../../../test/support/tools';
import { repoRoot } from '../../admin/runCli';

const temp = tempDir('esign-softhsm-');
const token = { label: 'esign-test', pin: '1234', soPin: '5678' };
const other = { label: 'esign-pin', pin: '2468', soPin: '5678' };
const { config } = provisionSoftHsm(temp.dir, [token, other]);
afterAll(() => temp.remove());

type Refusal = { status: number | null; code: string | null; message: string } | null;
interface Signed {
  locator: Record<string, string>;
  spki: string;
  data: string;
  signature: string;
}

/** Runs a scenario of pkcs11Probe.ts in a child process with SOFTHSM2_CONF set. */
function probe<T>(scenario: 'stores' | 'seal'): T {
  const args = {
    module: softHsmModule,
    tokenLabel: token.label,
    pin: token.pin,
    otherTokenLabel: other.label,
  };
  const stdout = execFileSync(
    process.execPath,
    ['--import', 'tsx', path.join(__dirname, 'pkcs11Probe.ts'), scenario, JSON.stringify(args)],
    { cwd: repoRoot, env: { ...process.env, SOFTHSM2_CONF: config }, encoding: 'utf8' },
  );
  return JSON.parse(stdout) as T;
}

const verifies = (signed: Signed) =>
  opensslVerifies(
    temp.dir,
    Buffer.from(signed.spki, 'base64'),
    Buffer.from(signed.data, 'base64'),
    Buffer.from(signed.signature, 'base64'),
  );

describe('PKCS#11 key store (SoftHSM2 token provisioned by the test)', () => {
  let report: {
    signed: Record<'rsa-2048' | 'ec-p256', Signed>;
    attributes: Record<string, unknown>;
    schemeMismatch: Refusal;
    keyNotOnToken: Refusal;
    wrongPin: Refusal;
    absentToken: Refusal;
    startup: Refusal;
    missingModule: Refusal;
  };
  beforeAll(() => {
    report = probe('stores');
  });

  it.each(['rsa-2048', 'ec-p256'] as const)(
    'a %s key generated on the token signs; openssl dgst -verify accepts it',
    (algorithm) => {
      const signed = report.signed[algorithm];
      expect(signed.locator).toEqual({
        store: 'pkcs11',
        pkcs11Id: expect.stringMatching(/^[0-9a-f]{32}$/),
        tokenLabel: token.label,
      });
      expect(verifies(signed)).toEqual({
        status: 0,
        output: expect.stringContaining('Verified OK'),
      });
      const tampered = { ...signed, data: Buffer.from('other data').toString('base64') };
      expect(verifies(tampered).status).not.toBe(0);
    },
  );

  it('ECDSA from the token (r||s) comes back DER-encoded', () => {
    const signature = Buffer.from(report.signed['ec-p256'].signature, 'base64');
    expect(signature[0]).toBe(0x30);
    expect(signature.length).toBeGreaterThanOrEqual(8);
    expect(signature.length).toBeLessThanOrEqual(72);
  });

  it('private keys on the token are private, sensitive and never extractable', () => {
    expect(report.attributes).toEqual({
      private: true,
      sensitive: true,
      alwaysSensitive: true,
      extractable: false,
      neverExtractable: true,
    });
  });

  it('a wrong PIN is reported as such, naming PKCS11_PIN', () => {
    expect(report.wrongPin).toEqual({
      status: 503,
      code: 'KEYSTORE_UNAVAILABLE',
      message: `PKCS11_PIN is wrong for token "${other.label}"`,
    });
  });

  it('at start-up a wrong PIN stops the server with a configuration error naming PKCS11_PIN', () => {
    expect(report.startup).toEqual({
      status: null,
      code: 'ConfigError',
      message: `PKCS11_PIN is wrong for token "${other.label}"`,
    });
  });

  it('an absent token is reported with the labels of the tokens present, sorted', () => {
    expect(report.absentToken).toEqual({
      status: 503,
      code: 'KEYSTORE_UNAVAILABLE',
      message: `No token labelled "no-such-token" (PKCS11_TOKEN_LABEL) in ${softHsmModule}; tokens present: "${other.label}", "${token.label}"`,
    });
  });

  it('a library that does not load is reported naming PKCS11_MODULE', () => {
    expect(report.missingModule).toMatchObject({
      status: 503,
      code: 'KEYSTORE_UNAVAILABLE',
      message: expect.stringMatching(/^PKCS11_MODULE \S*no-such-module\.so cannot be loaded/),
    });
  });

  it('a key no longer on the token, or asked for another scheme, is refused before signing', () => {
    expect(report.keyNotOnToken).toMatchObject({ status: 409, code: 'SIGNING_KEY_NOT_ON_TOKEN' });
    expect(report.schemeMismatch).toMatchObject({ status: 422, code: 'SIGNATURE_SCHEME_MISMATCH' });
  });
});

describe('the seal key with KEYSTORE=pkcs11 (development)', () => {
  it('lives on the token (one key when first used twice at once), has a development CA certificate for its key, and signs', () => {
    const seal = probe<{
      store: string;
      sameKeyAgain: boolean;
      spki: string;
      certificate: string | null;
      issuers: string[];
      data: string;
      signature: string;
    }>('seal');
    expect(seal.store).toBe('pkcs11');
    expect(seal.sameKeyAgain).toBe(true);
    const certificate = new x509.X509Certificate(Buffer.from(seal.certificate!, 'base64'));
    expect(Buffer.from(certificate.publicKey.rawData).toString('base64')).toBe(seal.spki);
    expect(verifies({ locator: {}, ...seal }).status).toBe(0);
    const file = (name: string) => path.join(temp.dir, name);
    fs.writeFileSync(file('seal.pem'), derToPem(Buffer.from(seal.certificate!, 'base64')));
    fs.writeFileSync(file('root.pem'), derToPem(Buffer.from(seal.issuers[0]!, 'base64')));
    expect(attempt('openssl', ['verify', '-CAfile', file('root.pem'), file('seal.pem')])).toEqual({
      status: 0,
      output: `${file('seal.pem')}: OK\n`,
    });
  });
});
