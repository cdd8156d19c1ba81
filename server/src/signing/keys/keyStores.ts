import type { Config } from '../../platform/config';
import type { ServiceSecrets } from '../../platform/secrets';
import type { KeyStore } from './keyStore';
import { Pkcs11KeyStore } from './pkcs11KeyStore';
import { SoftwareKeyStore } from './softwareKeyStore';

const tokenStores = new WeakMap<Config, Pkcs11KeyStore>();

/**
 * The key store KEYSTORE names. Software stores hold nothing but the derived key, so each call
 * makes one from the given secrets; a PKCS#11 store is kept per configuration (one session per
 * process). Creating it touches nothing: the token is opened on first use or by `ready()`.
 */
export function keyStoreOf(deps: { config: Config; secrets: ServiceSecrets }): KeyStore {
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
export async function closeKeyStore(config: Config): Promise<void> {
  const store = tokenStores.get(config);
  tokenStores.delete(config);
  await store?.close();
}
