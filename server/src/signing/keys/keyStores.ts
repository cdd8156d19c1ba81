import type { Config } from '../../platform/config';
import type { ServiceSecrets } from '../../platform/secrets';
import type { KeyStore } from './keyStore';
import { Pkcs11KeyStore } from './pkcs11KeyStore';
import { SoftwareKeyStore } from './softwareKeyStore';

const stores = new WeakMap<Config, KeyStore>();

/**
 * The key store KEYSTORE names, one per configuration (so one PKCS#11 session per process).
 * Creating it touches nothing: the token is opened on first use or by `ready()` at start-up.
 */
export function keyStoreOf(deps: { config: Config; secrets: ServiceSecrets }): KeyStore {
  let store = stores.get(deps.config);
  if (!store) {
    const settings = deps.config.keyStore;
    store =
      settings.kind === 'pkcs11'
        ? new Pkcs11KeyStore(settings)
        : new SoftwareKeyStore(deps.secrets.signingKeyEncryptionKey);
    stores.set(deps.config, store);
  }
  return store;
}

/** Closes the configuration's key store (its PKCS#11 session), if one was made. */
export async function closeKeyStore(config: Config): Promise<void> {
  const store = stores.get(config);
  stores.delete(config);
  await store?.close();
}
