import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Logger } from '../platform/logger';

export interface KeyPreparation {
  /** True when the keys were prepared; a failure is logged. */
  done: Promise<boolean>;
  /** Stops the preparation if it still runs (SIGTERM) and waits for it. */
  stop(): Promise<void>;
}

/**
 * Runs prepareSigningKeys in a child process: `prepareKeys.js` (or `.ts` under tsx) next to the
 * server's entry, with the same Node flags, environment and DATA_DIR. The ASN.1 stack it loads (about 15 MB) and the RSA keys it generates would
 * otherwise stay in the server's memory and hold its event loop. Creation is safe to interrupt
 * and to race: the CA is renamed into place whole, the seal row is unique and gets its
 * certificate on the next start when stopped before.
 */
export function startKeyPreparation(logger: Logger, missing: readonly string[]): KeyPreparation {
  const server = process.argv[1];
  if (server === undefined) throw new Error('no entry script to find prepareKeys next to');
  const entry = path.join(path.dirname(server), `prepareKeys${path.extname(server)}`);
  logger.info({ missing }, 'preparing signing keys in a child process');
  let child: ChildProcess | undefined;
  let stopped = false;
  // Loaded here: only a start with something to create needs it.
  const done = import('node:child_process').then(
    ({ spawn }) =>
      new Promise<boolean>((resolve) => {
        if (stopped) return resolve(false);
        const args = [...process.execArgv, entry];
        child = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'] });
        child.on('error', (error) => {
          logger.error({ err: error }, 'signing key preparation could not start');
          resolve(false);
        });
        child.on('exit', (code, signal) => {
          if (code === 0) return resolve(true);
          logger.error({ code, signal }, 'signing key preparation failed');
          resolve(false);
        });
      }),
  );
  return {
    done,
    stop: async () => {
      stopped = true;
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await done;
    },
  };
}
