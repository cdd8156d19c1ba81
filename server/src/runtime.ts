import fs from 'node:fs';
import path from 'node:path';
import type { AppDeps } from './context';
import { type OpenedDatabase, openDatabase } from './db/database';
import { type Clock, systemClock } from './platform/clock';
import type { Config } from './platform/config';
import { createLogger, type Logger } from './platform/logger';
import { deriveSecrets, loadMasterSecret } from './platform/secrets';
import { FileStore } from './storage/fileStore';

export interface Runtime {
  deps: AppDeps;
  database: OpenedDatabase;
}

/** Opens what the server and the operator CLI share: the SQLite file, the file store and the derived secrets. */
export function openRuntime(
  config: Config,
  options: { logger?: Logger; clock?: Clock } = {},
): Runtime {
  const database = openDatabase(config.databaseFile);
  const secrets = deriveSecrets(
    loadMasterSecret(config.dataDir, config.secretKey),
    config.jwtSecret,
  );
  const clock = options.clock ?? systemClock;
  const files = new FileStore(path.join(config.dataDir, 'files'), clock);
  fs.mkdirSync(files.tempDir, { recursive: true, mode: 0o700 });
  const deps: AppDeps = {
    db: database.db,
    config,
    clock,
    logger: options.logger ?? createLogger(config.logLevel),
    secrets,
    files,
  };
  if (config.environment !== 'production') {
    // The development CA's certificates name /api/dev/ocsp; asking it over HTTP would loop
    // back through the SSRF guard, so the checks ask it here. Loaded on first use.
    deps.localOcsp = async (issuer, request) => {
      const { localDevelopmentOcsp } = await import('./signing/ca/ocspResponder');
      return localDevelopmentOcsp(deps, issuer, request);
    };
  }
  return { database, deps };
}
