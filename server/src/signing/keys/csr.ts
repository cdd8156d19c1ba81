import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { ecdsaDerToRaw } from './ecdsa';
import type { KeyReference, KeyStore } from './keyStore';
import { schemeOf } from './keyStore';

const keyAlgorithms = {
  'rsa-2048': {
    key: { name: 'RSASSA-PKCS1-v1_5', hash: { name: 'SHA-256' } },
    signing: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
  },
  'ec-p256': {
    key: { name: 'ECDSA', namedCurve: 'P-256' },
    signing: { name: 'ECDSA', hash: 'SHA-256' },
  },
} as const;

/**
 * A PKCS#10 request signed by a key of the key store (it may sit on a token). @peculiar/x509
 * builds and encodes it; it signs through a WebCrypto facade whose `sign` is the key store's.
 */
export async function certificateRequest(
  store: KeyStore,
  ref: KeyReference,
  subject: x509.Name,
  extensions: x509.Extension[],
): Promise<x509.Pkcs10CertificateRequest> {
  const algorithm = keyAlgorithms[ref.algorithm];
  const spki = await store.publicKeySpki(ref);
  const facade = {
    subtle: {
      exportKey: async () => new Uint8Array(spki).buffer,
      sign: async (_algorithm: unknown, _key: unknown, data: ArrayBuffer) => {
        const signature = await store.sign(ref, new Uint8Array(data), schemeOf[ref.algorithm]);
        // WebCrypto's ECDSA result is r||s; x509 re-encodes it as DER.
        const raw = ref.algorithm === 'ec-p256' ? ecdsaDerToRaw(signature, 32) : signature;
        return new Uint8Array(raw).buffer;
      },
    },
  };
  const keyOf = (type: 'private' | 'public') => ({
    algorithm: algorithm.key,
    type,
    extractable: type === 'public',
    usages: [type === 'private' ? 'sign' : 'verify'],
  });
  return x509.Pkcs10CertificateRequestGenerator.create(
    {
      name: subject,
      extensions,
      signingAlgorithm: algorithm.signing,
      keys: { privateKey: keyOf('private'), publicKey: keyOf('public') } as never,
    },
    facade as never,
  );
}
