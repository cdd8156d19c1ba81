import type { KeyStore } from './keyStore';
import { Pkcs11KeyStore, type Pkcs11Settings } from './pkcs11KeyStore';
import { SoftwareKeyStore } from './softwareKeyStore';

/** Which key store to use (the server: its KEYSTORE settings). */
export type KeyStoreSettings = { kind: 'software' } | ({ kind: 'pkcs11' } & Pkcs11Settings);

/** What choosing a key store is given: the settings, and the key software keys are sealed with. */
export interface KeyStoreInputs {
  /** Also the identity a PKCS#11 store is kept under (one per configuration object). */
  config: { keyStore: KeyStoreSettings };
  secrets: { signingKeyEncryptionKey: Buffer };
}

const tokenStores = new WeakMap<object, Pkcs11KeyStore>();

/**
 * The key store KEYSTORE names. Software stores hold nothing but the derived key, so each call
 * makes one from the given secrets; a PKCS#11 store is kept per configuration (one session per
 * process). Creating it touches nothing: the token is opened on first use or by `ready()`.
 */
export function keyStoreOf(deps: KeyStoreInputs): KeyStore {
  const settings = deps.config.keyStore;
  if (settings.kind === 'software') {
    return new SoftwareKeyStore(deps.secrets.signingKeyEncryptionKey);
  }
  let store = tokenStores.get(deps.config);
  if (!store) {
    store = new Pkcs11KeyStore(settings);
    tokenStores.set(deps.config, store);
  }
  return store;
}

/** Closes the configuration's key store (its PKCS#11 session), if one was made. */
export async function closeKeyStore(config: object): Promise<void> {
  const store = tokenStores.get(config);
  tokenStores.delete(config);
  await store?.close();
}
