import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runLogDirVariable } from './support/runLog';

/**
 * jest globalSetup: one directory for the whole run's logs and issued credentials (see
 * support/runLog.ts), named in ESIGN_TEST_LOG_DIR for the workers. A directory given from outside
 * is used as it is and kept.
 */
export default function globalSetup(): void {
  if (process.env[runLogDirVariable]) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-test-run-'));
  process.env[runLogDirVariable] = dir;
  process.env.ESIGN_TEST_LOG_DIR_OWNED = '1';
}
