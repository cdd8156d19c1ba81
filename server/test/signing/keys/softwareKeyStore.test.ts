import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { attempt, opensslVerifies, tempDir } from '../../../../test/support/tools';
import { deriveSecrets } from '../../../src/platform/secrets';
import type { KeyAlgorithm, SignatureScheme } from '../../../src/signing/keys/keyStore';
import { SoftwareKeyStore } from '../../../src/signing/keys/softwareKeyStore';

const cases: [KeyAlgorithm, SignatureScheme][] = [
  ['rsa-2048', 'rsa-pkcs1-sha256'],
  ['ec-p256', 'ecdsa-sha256'],
];

describe('software key store', () => {
  const temp = tempDir('esign-keys-');
  const secrets = deriveSecrets(crypto.randomBytes(32));
  const store = new SoftwareKeyStore(secrets.signingKeyEncryptionKey);
  afterAll(() => temp.remove());

  it.each(cases)('a %s key signs with %s and openssl verifies it', async (algorithm, scheme) => {
    const ref = await store.generateKey(`test-${algorithm}`, algorithm);
    const data = Buffer.from('Hợp đồng số 42: the signed attributes stand here');
    const signature = await store.sign(ref, data, scheme);
    const verdict = opensslVerifies(temp.dir, await store.publicKeySpki(ref), data, signature);
    expect(verdict).toEqual({ status: 0, output: expect.stringContaining('Verified OK') });
    const other = opensslVerifies(temp.dir, ref.publicKeySpki, Buffer.from('other'), signature);
    expect(other.status).not.toBe(0);
  });

  it('ECDSA signatures are DER (SEQUENCE of two INTEGERs)', async () => {
    const ref = await store.generateKey('test-der', 'ec-p256');
    const signature = await store.sign(ref, Buffer.from('x'), 'ecdsa-sha256');
    expect(signature[0]).toBe(0x30);
    expect(signature[1]).toBe(signature.length - 2);
  });

  it('the private key at rest is not readable without the master secret', async () => {
    const ref = await store.generateKey('test-at-rest', 'rsa-2048');
    if (ref.locator.store !== 'software') throw new Error('expected a software key');
    const sealed = ref.locator.encryptedPrivateKey;
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    // Neither PEM nor DER PKCS#8 that openssl can load.
    const file = path.join(temp.dir, 'sealed.key');
    fs.writeFileSync(file, Buffer.from(sealed.split('.')[3]!, 'base64url'));
    expect(attempt('openssl', ['pkey', '-inform', 'DER', '-in', file, '-noout']).status).not.toBe(
      0,
    );
    // Another master secret cannot open it.
    const stranger = new SoftwareKeyStore(
      deriveSecrets(crypto.randomBytes(32)).signingKeyEncryptionKey,
    );
    await expect(stranger.sign(ref, Buffer.from('x'), 'rsa-pkcs1-sha256')).rejects.toMatchObject({
      code: 'SIGNING_KEY_UNREADABLE',
      message: expect.stringContaining('master secret'),
    });
    // A sealed key copied under another label does not open either (bound to its label).
    await expect(
      store.sign({ ...ref, label: 'another' }, Buffer.from('x'), 'rsa-pkcs1-sha256'),
    ).rejects.toMatchObject({ code: 'SIGNING_KEY_UNREADABLE' });
  });

  it('a key signs only with the scheme of its algorithm', async () => {
    const ref = await store.generateKey('test-scheme', 'rsa-2048');
    await expect(store.sign(ref, Buffer.from('x'), 'ecdsa-sha256')).rejects.toMatchObject({
      code: 'SIGNATURE_SCHEME_MISMATCH',
    });
  });

  it('refuses a PKCS#11 key (made under KEYSTORE=pkcs11)', async () => {
    const ref = await store.generateKey('test-other', 'ec-p256');
    const moved = {
      ...ref,
      locator: { store: 'pkcs11' as const, pkcs11Id: '01', tokenLabel: 't' },
    };
    await expect(store.sign(moved, Buffer.from('x'), 'ecdsa-sha256')).rejects.toMatchObject({
      code: 'SIGNING_KEY_IN_OTHER_STORE',
    });
  });
});
