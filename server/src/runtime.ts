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
  return {
    database,
    deps: {
      db: database.db,
      config,
      clock,
      logger: options.logger ?? createLogger(config.logLevel),
      secrets,
      files,
    },
  };
}
