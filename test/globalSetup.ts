import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { postgresUrlVariable, startPostgresCluster } from './support/postgres';
import { runLogDirVariable } from './support/runLog';

/**
 * jest globalSetup: one directory for the whole run's logs and issued credentials (see
 * support/runLog.ts), named in ESIGN_TEST_LOG_DIR for the workers (a directory given from outside
 * is used as it is and kept); and, when the postgres project runs, one PostgreSQL cluster named
 * in ESIGN_TEST_PG_URL (stopped by the teardown).
 */
export default async function globalSetup(): Promise<void> {
  if (!process.env[runLogDirVariable]) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-test-run-'));
    process.env[runLogDirVariable] = dir;
    process.env.ESIGN_TEST_LOG_DIR_OWNED = '1';
  }
  const dialects = (process.env.ESIGN_TEST_DIALECTS ?? 'sqlite,postgres').split(',');
  if (dialects.some((name) => name.trim() === 'postgres') && !process.env[postgresUrlVariable]) {
    globalThis.esignPostgresCluster = await startPostgresCluster();
    process.env[postgresUrlVariable] = globalThis.esignPostgresCluster.baseUrl;
  }
}
