import 'reflect-metadata';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { attempt, derToPem, run, tempDir } from '../../../../test/support/tools';
import {
  type CaDeps,
  developmentCa,
  developmentTsaCredentials,
} from '../../../src/dev/developmentCa';
import { systemClock } from '../../../src/platform/clock';
import { deriveSecrets } from '../../../src/platform/secrets';
import { createHarness, type Harness } from '../../support/harness';

const temp = tempDir('esign-devca-');
const harnesses: Harness[] = [];
afterAll(async () => {
  for (const h of harnesses) await h.close();
  temp.remove();
});

/** A runtime of its own (database and DATA_DIR) in `environment`. */
function caDeps(environment: 'development' | 'sandbox' | 'production'): CaDeps {
  const h = createHarness({
    APP_ENV: environment,
    SERVICE_NAME: 'ESign Test',
    SECRET_KEY: 'a master secret for the CA tests',
    // Production needs a real TSA; never contacted here.
    ...(environment === 'production' ? { TSA_URL: 'https://tsa.example' } : {}),
  });
  harnesses.push(h);
  return { ...h.deps, clock: systemClock };
}

const file = (name: string) => path.join(temp.dir, name);
const subjectKey = (curve = 'prime256v1') =>
  crypto
    .generateKeyPairSync('ec', { namedCurve: curve })
    .publicKey.export({ format: 'der', type: 'spki' });

/** `openssl x509 -text` of a DER certificate, names in UTF-8. */
function certificateText(der: Buffer, name: string): string {
  fs.writeFileSync(file(`${name}.pem`), derToPem(der));
  return run('openssl', [
    'x509',
    '-in',
    file(`${name}.pem`),
    '-noout',
    '-text',
    '-nameopt',
    'utf8',
  ]);
}

function verifyAgainstRoot(der: Buffer, name: string, root: string) {
  fs.writeFileSync(file(`${name}.pem`), derToPem(der));
  return attempt('openssl', ['verify', '-CAfile', root, file(`${name}.pem`)]);
}

describe('development CA', () => {
  const deps = caDeps('development');
  const root = file('root.pem');

  beforeAll(async () => {
    // Two first uses at once make one CA.
    const [first, second] = await Promise.all([developmentCa(deps), developmentCa(deps)]);
    expect(first.certificate.equals(second.certificate)).toBe(true);
    fs.writeFileSync(root, first.certificatePem);
  });

  it('is created in the database, nothing under DATA_DIR: a self-signed root "ESign Development CA"', async () => {
    expect(fs.existsSync(path.join(deps.config.dataDir, 'dev-ca'))).toBe(false);
    const row = await deps.db.selectFrom('development_ca').selectAll().executeTakeFirstOrThrow();
    expect(derToPem(row.ca_certificate_der).trim()).toBe(fs.readFileSync(root, 'utf8').trim());
    const text = run('openssl', ['x509', '-in', root, '-noout', '-text', '-nameopt', 'utf8']);
    expect(text).toContain('Subject: CN=ESign Development CA, O=ESign Test');
    expect(text).toContain('Issuer: CN=ESign Development CA, O=ESign Test');
    expect(text).toMatch(/Basic Constraints: critical\s+CA:TRUE/);
    expect(text).toMatch(/Key Usage: critical\s+Certificate Sign, CRL Sign/);
    expect(text).toContain('Public-Key: (2048 bit)');
    expect(attempt('openssl', ['verify', '-CAfile', root, root]).status).toBe(0);
  });

  it('keeps its private keys encrypted under the master secret', async () => {
    const row = await deps.db.selectFrom('development_ca').selectAll().executeTakeFirstOrThrow();
    for (const [name, sealed] of [
      ['ca', row.ca_private_key],
      ['tsa', row.tsa_private_key],
    ] as const) {
      expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
      const keyFile = file(`${name}-sealed.key`);
      fs.writeFileSync(keyFile, sealed);
      expect(attempt('openssl', ['pkey', '-in', keyFile, '-noout']).status).not.toBe(0);
      const der = file(`${name}-sealed.der`);
      fs.writeFileSync(der, Buffer.from(sealed.split('.')[3]!, 'base64url'));
      expect(attempt('openssl', ['pkey', '-inform', 'DER', '-in', der, '-noout']).status).not.toBe(
        0,
      );
    }
  });

  it('opens again with the same master secret and never with another', async () => {
    const again = await developmentCa({ ...deps, clock: systemClock });
    await expect(
      again.issue({ kind: 'seal', serviceName: 'X' }, subjectKey()),
    ).resolves.toBeInstanceOf(Buffer);
    const stranger = {
      ...deps,
      secrets: deriveSecrets(Buffer.from('another master secret')),
    };
    const ca = await developmentCa(stranger);
    await expect(ca.issue({ kind: 'seal', serviceName: 'X' }, subjectKey())).rejects.toMatchObject({
      code: 'SIGNING_KEY_UNREADABLE',
    });
  });

  it('issues the seal certificate: subject from SERVICE_NAME, digitalSignature + nonRepudiation', async () => {
    const ca = await developmentCa(deps);
    const der = await ca.issue({ kind: 'seal', serviceName: 'ESign Test' }, subjectKey());
    expect(verifyAgainstRoot(der, 'seal', root)).toEqual({
      status: 0,
      output: `${file('seal.pem')}: OK\n`,
    });
    const text = certificateText(der, 'seal');
    expect(text).toContain('Subject: CN=ESign Test, O=ESign Test');
    expect(text).toMatch(/Key Usage: critical\s+Digital Signature, Non Repudiation/);
    expect(text).toMatch(/Basic Constraints: critical\s+CA:FALSE/);
    expect(text).toContain('Authority Key Identifier');
  });

  it('issues signer certificates with Vietnamese names as UTF8String and the e-mail', async () => {
    const ca = await developmentCa(deps);
    const der = await ca.issue(
      {
        kind: 'signer',
        name: 'Nguyễn Thị Ánh Tuyết',
        email: 'tuyet@example.vn',
        organization: 'Công ty Đại Phát',
      },
      subjectKey(),
    );
    expect(verifyAgainstRoot(der, 'signer', root).status).toBe(0);
    const text = certificateText(der, 'signer');
    expect(text).toContain('Subject: CN=Nguyễn Thị Ánh Tuyết, O=Công ty Đại Phát');
    expect(text).toContain('email:tuyet@example.vn');
    const parsed = run('openssl', ['asn1parse', '-in', file('signer.pem')]);
    expect(parsed).toMatch(/UTF8STRING\s+:Nguyễn Thị Ánh Tuyết/);
  });

  it('issues the TSA certificate with extendedKeyUsage timeStamping, critical', async () => {
    const tsa = await developmentTsaCredentials(deps);
    expect(tsa.chain).toHaveLength(2);
    expect(tsa.chain[0]!.equals(tsa.certificate)).toBe(true);
    expect(derToPem(tsa.chain[1]!)).toBe(`${fs.readFileSync(root, 'utf8').trim()}\n`);
    expect(verifyAgainstRoot(tsa.certificate, 'tsa', root).status).toBe(0);
    const text = certificateText(tsa.certificate, 'tsa');
    expect(text).toMatch(/Extended Key Usage: critical\s+Time Stamping/);
    expect(text).toContain('Subject: CN=ESign Test Development TSA, O=ESign Test');
    // The key signs, and its public half is the certificate's.
    const signature = crypto.sign('sha256', Buffer.from('tst'), tsa.privateKey);
    const publicKey = crypto.createPublicKey(derToPem(tsa.certificate));
    expect(crypto.verify('sha256', Buffer.from('tst'), publicKey, signature)).toBe(true);
    expect(
      attempt('openssl', ['verify', '-purpose', 'timestampsign', '-CAfile', root, file('tsa.pem')])
        .status,
    ).toBe(0);
  });

  it('works in sandbox too', async () => {
    const sandbox = caDeps('sandbox');
    await expect(developmentCa(sandbox)).resolves.toMatchObject({
      certificatePem: expect.stringContaining('BEGIN CERTIFICATE'),
    });
  });

  it('is never created nor used in production', async () => {
    const production = caDeps('production');
    const refusal = {
      code: 'DEVELOPMENT_CA_DISABLED',
      message: expect.stringContaining('never used in production'),
    };
    await expect(developmentCa(production)).rejects.toMatchObject(refusal);
    await expect(developmentTsaCredentials(production)).rejects.toMatchObject(refusal);
    expect(await production.db.selectFrom('development_ca').select('id').execute()).toEqual([]);
  });
});
