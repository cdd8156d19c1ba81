/**
 * Entry of the child process the server starts when its signing keys are missing
 * (keys/keyPreparation.ts): a bundle of its own, so that the server's never holds the
 * code that creates keys. Same environment as the server; exits 0 once the keys are ready.
 */

import { prepareSigningKeys } from './keys/startup';
import { loadConfig } from './platform/config';
import { openRuntime } from './runtime';
import { closeKeyStore } from './signing/keys/keyStores';

async function prepareKeys(): Promise<void> {
  const config = loadConfig();
  const { deps, database } = openRuntime(config);
  try {
    await prepareSigningKeys(deps);
    deps.logger.info('signing keys ready');
  } finally {
    await closeKeyStore(config);
    await database.close();
  }
}

prepareKeys().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
