import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { attempt, tempDir } from '../../../../test/support/tools';
import { utf8Name } from '../../../src/dev/certificateProfiles';
import { deriveSecrets } from '../../../src/platform/secrets';
import { certificateRequest } from '../../../src/signing/keys/csr';
import { ecdsaDerToRaw, ecdsaRawToDer } from '../../../src/signing/keys/ecdsa';
import type { KeyAlgorithm } from '../../../src/signing/keys/keyStore';
import { SoftwareKeyStore } from '../../../src/signing/keys/softwareKeyStore';

const temp = tempDir('esign-csr-');
afterAll(() => temp.remove());

describe('certificate signing requests signed through the key store', () => {
  const store = new SoftwareKeyStore(deriveSecrets(crypto.randomBytes(32)).signingKeyEncryptionKey);

  it.each(['rsa-2048', 'ec-p256'] as KeyAlgorithm[])(
    'a %s key makes a CSR that openssl req -verify accepts, with a UTF-8 subject',
    async (algorithm) => {
      const ref = await store.generateKey(`csr-${algorithm}`, algorithm);
      const request = await certificateRequest(
        store,
        ref,
        utf8Name([
          ['CN', 'Đỗ Quốc Hưng'],
          ['O', 'Công ty Đại Phát'],
        ]),
        [],
      );
      const file = path.join(temp.dir, `${algorithm}.csr`);
      fs.writeFileSync(file, request.toString('pem'));
      const verdict = attempt('openssl', [
        'req',
        '-in',
        file,
        '-verify',
        '-noout',
        '-subject',
        '-nameopt',
        'utf8',
      ]);
      expect(verdict.status).toBe(0);
      expect(verdict.output).toMatch(/verify OK/i);
      expect(verdict.output).toContain('subject=CN=Đỗ Quốc Hưng, O=Công ty Đại Phát');
    },
  );
});

describe('ECDSA encodings', () => {
  it('r||s and DER convert both ways, high bits and leading zeros included', () => {
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', {
      namedCurve: 'prime256v1',
    });
    for (let round = 0; round < 200; round++) {
      const data = crypto.randomBytes(16);
      const raw = crypto.sign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
      const der = ecdsaRawToDer(raw);
      expect(crypto.verify('sha256', data, publicKey, der)).toBe(true);
      expect(ecdsaDerToRaw(der, 32).equals(raw)).toBe(true);
    }
    const edge = Buffer.concat([Buffer.alloc(31), Buffer.from([1]), Buffer.alloc(32, 0xff)]);
    expect(ecdsaRawToDer(edge).toString('hex')).toBe(`3026020101022100${'ff'.repeat(32)}`);
    expect(ecdsaDerToRaw(ecdsaRawToDer(edge), 32).equals(edge)).toBe(true);
  });

  it('refuse what is not a signature', () => {
    expect(() => ecdsaRawToDer(Buffer.alloc(63))).toThrow(RangeError);
    expect(() => ecdsaDerToRaw(Buffer.from('300602010102', 'hex'), 32)).toThrow(RangeError);
  });
});
