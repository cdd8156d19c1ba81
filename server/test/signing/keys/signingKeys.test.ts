import 'reflect-metadata';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as x509 from '@peculiar/x509';
import { derToPem, run, tempDir } from '../../../../test/support/tools';
import { importCertificate } from '../../../src/keys/certificates';
import { findSigningKey } from '../../../src/keys/queries';
import { issueSignerCertificate, sealKey } from '../../../src/keys/signingKeys';
import { prepareSigningKeys } from '../../../src/keys/startup';
import { deriveSecrets } from '../../../src/platform/secrets';
import { certifiedKey, signWithKey } from '../../../src/signing/keys/signingKey';
import { createTenant } from '../../../src/tenancy/service';
import { createHarness, type Harness } from '../../support/harness';

const temp = tempDir('esign-signing-keys-');
afterAll(() => temp.remove());

let h: Harness;
afterEach(() => h.close());

async function tenantOf(harness: Harness) {
  const { tenant } = await createTenant(harness.deps.db, harness.now(), {
    code: 'ACME',
    name: 'Công ty ACME',
  });
  return tenant;
}

const verifiesWithCertificate = (certificate: Buffer, data: Buffer, signature: Buffer) =>
  crypto.verify('sha256', data, crypto.createPublicKey(derToPem(certificate)), signature);

describe('the service seal', () => {
  it('is made once, even when first used twice at the same time, and signs under its certificate', async () => {
    h = createHarness();
    h.clock.set(new Date());
    const [first, second] = await Promise.all([sealKey(h.deps), sealKey(h.deps)]);
    expect(second.id).toBe(first.id);
    expect(first).toMatchObject({ purpose: 'seal', tenantId: null, store: 'software' });
    expect(first.certificateSource).toBe('development_ca');
    const { chain } = certifiedKey(first);
    expect(chain.map((der) => new x509.X509Certificate(der).subject)).toEqual([
      'CN=ESign, O=ESign',
      'CN=ESign Development CA, O=ESign',
    ]);
    const data = Buffer.from('audit PDF signed attributes');
    const signature = await signWithKey(h.deps, first, data);
    expect(verifiesWithCertificate(first.certificate!, data, signature)).toBe(true);
  });

  it('keeps its private key in the database only sealed under the master secret', async () => {
    h = createHarness();
    const seal = await sealKey(h.deps);
    const row = await findSigningKey(h.deps.db, seal.id);
    expect(row?.encrypted_private_key).toMatch(/^v1\./);
    expect(row?.pkcs11_id).toBeNull();
    const stranger = { ...h.deps, secrets: deriveSecrets(crypto.randomBytes(32)) };
    await expect(signWithKey(stranger, seal, Buffer.from('x'))).rejects.toMatchObject({
      code: 'SIGNING_KEY_UNREADABLE',
    });
  });

  it('in production has no certificate until one is imported, and is not used without one', async () => {
    h = createHarness({ APP_ENV: 'production', TSA_URL: 'https://tsa.example' });
    const seal = await sealKey(h.deps);
    expect(seal.certificate).toBeNull();
    expect(() => certifiedKey(seal)).toThrow(
      expect.objectContaining({ code: 'SEAL_CERTIFICATE_MISSING' }),
    );
    expect(fs.existsSync(path.join(h.dataDir, 'dev-ca'))).toBe(false);
  });
});

describe('start-up', () => {
  it('development creates the development CA at start; production does not', async () => {
    h = createHarness();
    await prepareSigningKeys(h.deps);
    expect(await h.deps.db.selectFrom('development_ca').select('id').execute()).toEqual([
      { id: 1 },
    ]);
    await h.close();
    h = createHarness({ APP_ENV: 'production', TSA_URL: 'https://tsa.example' });
    await prepareSigningKeys(h.deps);
    expect(await h.deps.db.selectFrom('development_ca').select('id').execute()).toEqual([]);
  });
});

describe('cloud_hsm signer keys', () => {
  it('are one per tenant and e-mail, whatever its case, with a development certificate', async () => {
    h = createHarness();
    h.clock.set(new Date());
    const tenant = await tenantOf(h);
    const signer = { email: 'Lan@Example.vn', name: 'Phạm Thị Lan' };
    // The key is made with the name; then two requests at once, with the e-mail only in other
    // cases, find that one key (on PostgreSQL they truly run at the same time).
    const key = await issueSignerCertificate(h.deps, tenant, signer);
    const [same, again] = await Promise.all([
      issueSignerCertificate(h.deps, tenant, { email: 'lan@example.vn' }),
      issueSignerCertificate(h.deps, tenant, { email: 'LAN@EXAMPLE.VN' }),
    ]);
    expect([same.id, again.id]).toEqual([key.id, key.id]);
    const certificate = new x509.X509Certificate(key.certificate!);
    expect(certificate.subject).toBe('CN=Phạm Thị Lan, O=Công ty ACME');
    expect(key.issuers).toHaveLength(1);
    const data = Buffer.from('signed attributes');
    expect(
      verifiesWithCertificate(key.certificate!, data, await signWithKey(h.deps, key, data)),
    ).toBe(true);
  });

  it('refuse an e-mail that is not one', async () => {
    h = createHarness();
    const tenant = await tenantOf(h);
    await expect(
      issueSignerCertificate(h.deps, tenant, { email: 'lan at example' }),
    ).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      field: 'email',
    });
  });
});

describe('certificate import', () => {
  /** An openssl CA issuing for `spki` with the given extensions and validity. */
  function issueWithOpenssl(spki: Buffer, extensions: string, days: string, name: string): string {
    const file = (suffix: string) => path.join(temp.dir, `${name}.${suffix}`);
    fs.writeFileSync(
      file('pub.pem'),
      crypto
        .createPublicKey({ key: spki, format: 'der', type: 'spki' })
        .export({ format: 'pem', type: 'spki' }),
    );
    run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      file('ca.key'),
      '-out',
      file('ca.pem'),
      '-subj',
      '/CN=Import CA',
      '-days',
      '30',
    ]);
    fs.writeFileSync(file('ext'), extensions);
    run('openssl', [
      'x509',
      '-new',
      '-force_pubkey',
      file('pub.pem'),
      '-subj',
      '/CN=Imported',
      '-CA',
      file('ca.pem'),
      '-CAkey',
      file('ca.key'),
      '-days',
      days,
      '-extfile',
      file('ext'),
      '-out',
      file('leaf.pem'),
    ]);
    return fs.readFileSync(file('leaf.pem'), 'utf8');
  }

  it('refuses garbage, a certificate without signing key usage, and an expired one, changing nothing', async () => {
    h = createHarness({ APP_ENV: 'production', TSA_URL: 'https://tsa.example' });
    h.clock.set(new Date());
    const seal = await sealKey(h.deps);
    const spki = seal.reference.publicKeySpki;
    await expect(importCertificate(h.deps, seal.id, 'hello')).rejects.toMatchObject({
      code: 'CERTIFICATE_INVALID',
    });
    const encipherOnly = issueWithOpenssl(spki, 'keyUsage=critical,keyEncipherment\n', '30', 'ku');
    await expect(importCertificate(h.deps, seal.id, encipherOnly)).rejects.toMatchObject({
      code: 'CERTIFICATE_INVALID',
      message: expect.stringContaining('does not allow signing'),
    });
    const good = issueWithOpenssl(spki, 'keyUsage=critical,nonRepudiation\n', '30', 'good');
    h.clock.set(new Date(Date.now() + 40 * 24 * 3600 * 1000));
    await expect(importCertificate(h.deps, seal.id, good)).rejects.toMatchObject({
      code: 'CERTIFICATE_INVALID',
      message: expect.stringContaining('not valid now'),
    });
    expect((await sealKey(h.deps)).certificate).toBeNull();
    h.clock.set(new Date());
    const imported = await importCertificate(h.deps, seal.id, good);
    expect(imported.certificateSource).toBe('imported');
    expect(imported.issuers).toEqual([]);
  });
});
