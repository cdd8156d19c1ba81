import type { Db } from '../db/database';
import type { Clock } from '../platform/clock';
import type { Config } from '../platform/config';
import type { ServiceSecrets } from '../platform/secrets';
import type { FileStore } from '../storage/fileStore';

/**
 * Interim: what the parts of `signing/` that still read the service's database, settings and
 * file store (finalize/ preparations and archives, keys/ rows, verification's revocation
 * settings) are given, structurally the server's dependency bag without importing it. These parts are
 * to move out to app folders; the library's own inputs are in trustPolicy.ts.
 */
export interface ServiceDeps {
  db: Db;
  config: Config;
  clock: Clock;
  secrets: ServiceSecrets;
  files: FileStore;
}
