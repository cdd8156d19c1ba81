import { ApiError } from '../../errors/apiError';
import { ConfigError } from '../../errors/configError';
import { type CaDeps, ensureDevelopmentCa } from '../ca/developmentCa';
import { keyStoreOf } from './keyStores';

/**
 * At server start: the key store must be usable (PKCS#11 module loads, token present, PIN
 * right), else the process refuses to start with the store's message (it names the setting);
 * development and sandbox also create the development CA now rather than on the first signature.
 */
export async function prepareSigningKeys(deps: CaDeps): Promise<void> {
  try {
    await keyStoreOf(deps).ready();
  } catch (error) {
    if (error instanceof ApiError && error.code === 'KEYSTORE_UNAVAILABLE') {
      throw new ConfigError(error.message);
    }
    throw error;
  }
  if (deps.config.environment !== 'production') await ensureDevelopmentCa(deps);
}
