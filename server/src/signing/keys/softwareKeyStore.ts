import crypto from 'node:crypto';
import type { KeyAlgorithm, KeyReference, KeyStore, SignatureScheme } from './keyStore';
import { checkScheme, otherStore } from './scheme';
import { openPrivateKey, sealPrivateKey } from './sealedKey';

const generationOptions = {
  'rsa-2048': () =>
    crypto.generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 65537 }),
  'ec-p256': () => crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' }),
} satisfies Record<KeyAlgorithm, () => crypto.KeyPairKeyObjectResult>;

/**
 * The embedded default: keys made by node:crypto, their PKCS#8 sealed under the master secret
 * and kept in the database. The private key is opened only inside `sign` and wiped after.
 */
export class SoftwareKeyStore implements KeyStore {
  readonly kind = 'software';

  constructor(private readonly encryptionKey: Buffer) {}

  async generateKey(label: string, algorithm: KeyAlgorithm): Promise<KeyReference> {
    const { publicKey, privateKey } = generationOptions[algorithm]();
    const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' });
    try {
      return {
        label,
        algorithm,
        publicKeySpki: publicKey.export({ format: 'der', type: 'spki' }),
        locator: {
          store: 'software',
          encryptedPrivateKey: sealPrivateKey(this.encryptionKey, label, pkcs8),
        },
      };
    } finally {
      pkcs8.fill(0);
    }
  }

  async publicKeySpki(ref: KeyReference): Promise<Buffer> {
    return Buffer.from(ref.publicKeySpki);
  }

  async sign(ref: KeyReference, data: Uint8Array, scheme: SignatureScheme): Promise<Buffer> {
    checkScheme(ref, scheme);
    if (ref.locator.store !== 'software') throw otherStore(ref);
    const pkcs8 = openPrivateKey(this.encryptionKey, ref.label, ref.locator.encryptedPrivateKey);
    try {
      const key = crypto.createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
      return crypto.sign('sha256', data, { key, dsaEncoding: 'der' });
    } finally {
      pkcs8.fill(0);
    }
  }

  async discardKey(): Promise<void> {
    // Nothing outside the row that was not written.
  }

  async ready(): Promise<void> {}

  async close(): Promise<void> {}
}
