/** Creating what start-up needs: the development CA and the seal (development and sandbox). */
import { ensureDevelopmentCa } from '../dev/developmentCa';
import { sealKey } from './signingKeys';
import { checkKeyStore } from './startupState';
import type { KeyDeps } from './storedKeys';

/**
 * Everything start-up prepares: the key store checked, and in development and sandbox the
 * development CA and the seal with its certificate, created when missing. Production creates
 * nothing (signingKeysState says what its operator must do). The server runs this in a child
 * process (keyPreparation.ts), the CLI and tests in theirs.
 */
export async function prepareSigningKeys(deps: KeyDeps): Promise<void> {
  await checkKeyStore(deps);
  if (deps.config.environment === 'production') return;
  await ensureDevelopmentCa(deps);
  await sealKey(deps);
}
