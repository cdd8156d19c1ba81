import fs from 'node:fs';
import './support/postgres';
import { runLogDirVariable } from './support/runLog';
import { scanRunLogs } from './support/runLogScan';

/**
 * jest globalTeardown: fails the run when a log line of any server the tests started holds a
 * credential the run was issued (a signing link or invitation token, a page credential, an OTP,
 * an API key, a refresh token, a presigned URL's signature…). The report names the log file and
 * line and a shortened hint, never the credential. The run directory is removed when the run is
 * clean, kept for inspection otherwise.
 */
export default function globalTeardown(): void {
  // Only jest's own teardown (never a test worker calling this function) stops the run's cluster.
  if (process.env.JEST_WORKER_ID === undefined) globalThis.esignPostgresCluster?.stop();
  const dir = process.env[runLogDirVariable];
  if (!dir || !fs.existsSync(dir)) return;
  const { leaks, secrets, files } = scanRunLogs(dir);
  if (leaks.length > 0) {
    const shown = leaks
      .slice(0, 20)
      .map((leak) => `  ${leak.file}:${leak.line}: ${leak.hint} issued by ${leak.source}`);
    throw new Error(
      [
        `${leaks.length} issued credential(s) found in the test run's logs (${dir} kept):`,
        ...shown,
        ...(leaks.length > shown.length ? [`  … and ${leaks.length - shown.length} more`] : []),
      ].join('\n'),
    );
  }
  if (process.env.ESIGN_TEST_LOG_DIR_OWNED === '1')
    fs.rmSync(dir, { recursive: true, force: true });
  process.stdout.write(
    `\nNo credential in the logs: ${secrets} issued credential(s) checked against ${files} log file(s).\n`,
  );
}
