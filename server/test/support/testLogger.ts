import { runLogDir, runLogged } from '../../../test/support/runLog';
import { createLogger, type Logger } from '../../src/platform/logger';

/**
 * The logger of a server a test starts in process: the production logger (its redaction
 * included) at `trace`, so the request log and everything else is written, into the jest run's
 * log directory (test/support/runLog.ts), where the run's teardown looks for credentials. The
 * console stays quiet; outside a jest run with that directory it is silent.
 */
export function testLogger(): Logger {
  if (runLogDir() === undefined) return createLogger('silent');
  return createLogger('trace', runLogged({ write: () => undefined }));
}

/** A logger writing into `lines` for a test's own assertions, and into the run's log too. */
export function linesLogger(level: string, lines: string[]): Logger {
  return createLogger(level, runLogged({ write: (line: string) => void lines.push(line) }));
}
