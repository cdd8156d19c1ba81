import type { Principal } from './auth/principal';
import type { Db } from './db/database';
import type { Clock } from './platform/clock';
import type { Config } from './platform/config';
import type { Logger } from './platform/logger';
import type { ServiceSecrets } from './platform/secrets';
import type { FileStore } from './storage/fileStore';

/** Everything a request handler may use, built once by main.ts (or a test) and passed in. */
export interface AppDeps {
  db: Db;
  config: Config;
  clock: Clock;
  logger: Logger;
  secrets: ServiceSecrets;
  /** Content-addressed file bytes under DATA_DIR/files. */
  files: FileStore;
}

export interface AppEnv {
  Variables: {
    deps: AppDeps;
    requestId: string;
    logger: Logger;
    principal: Principal;
  };
}
