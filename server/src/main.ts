import { buildApp } from './app';
import { expireOverdueContracts } from './contracts/expiry';
import { prepareTenants } from './demo/seed';
import { runnerOptions, startRunner } from './jobs/runner';
import { type KeyPreparation, startKeyPreparation } from './keys/keyPreparation';
import { checkKeyStore, signingKeysState } from './keys/startupState';
import { notifyKinds } from './notify/worker';
import { closePdfWorkers } from './pdf/worker/pool';
import { ConfigError, loadConfig } from './platform/config';
import { createLogger } from './platform/logger';
import { openRuntime } from './runtime';
import { type Fetch, listenFirst } from './serve';
import { closeKeyStore } from './signing/keys/keyStores';
import { scheduleStorageSweep, storageSweepJob } from './storage/sweepJob';
import { webhookKind, webhookWorkerOptionsOf } from './webhooks/worker';
import { startDeadlineScheduler } from './workflow/deadlines';

/** How often overdue tasks and contracts are looked for; the first pass runs at start (catching up). */
const deadlineIntervalMs = 30_000;

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  // The port first: one that cannot be had stops the start before anything is written. What
  // arrives before the app is built waits for it.
  let appBuilt: (fetch: Fetch) => void = () => undefined;
  const builtFetch = new Promise<Fetch>((resolve) => {
    appBuilt = resolve;
  });
  let answer: Fetch = async (request, env) => (await builtFetch)(request, env);
  const { server, address } = await listenFirst((request, env) => answer(request, env), {
    hostname: config.host,
    port: config.port,
    logger,
  });
  const { deps, database } = openRuntime(config, { logger });
  const { created: newDatabase } = await database.ready();
  const instructions = await prepareTenants(deps, { newDatabase });
  // Printed once per start, before the "listening" line; it holds no secret.
  if (instructions) process.stdout.write(`${instructions}\n`);
  // Before answering: a key store that cannot be used stops the start (ConfigError).
  await checkKeyStore(deps);
  const keys = await signingKeysState(deps);
  if (keys.kind === 'operator') deps.logger.warn(keys.message);
  let keyPreparation: KeyPreparation | undefined;
  let stopping = false;

  const app = buildApp(deps);
  // One runner for every job kind: webhook deliveries, e-mail and SMS, the daily file store sweep.
  const webhookOptions = webhookWorkerOptionsOf(config);
  await scheduleStorageSweep(deps);
  const jobs = startRunner(
    deps,
    [webhookKind(deps, webhookOptions), ...notifyKinds(deps), storageSweepJob(deps)],
    runnerOptions(webhookOptions),
  );
  const deadlines = startDeadlineScheduler(deps, deadlineIntervalMs, [
    { name: 'contracts', run: expireOverdueContracts },
  ]);
  // Before the "listening" line: whoever waits for it may stop the server at once.
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    deps.logger.info({ signal }, 'shutting down');
    // Longer than one webhook attempt (10 s), which stop() lets finish.
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    server.close(async () => {
      await jobs.stop();
      await deadlines.stop();
      await keyPreparation?.stop();
      await closePdfWorkers();
      await closeKeyStore(config);
      await database.close();
      process.exit(0);
    });
    // Idle keep-alive sockets would hold close() open.
    if ('closeIdleConnections' in server) server.closeIdleConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  answer = app.fetch;
  appBuilt(app.fetch);
  deps.logger.info(
    {
      url: `http://${address.address}:${address.port}`,
      docs: `${config.publicUrl}/api/docs`,
      environment: config.environment,
    },
    'listening',
  );
  // Only now: creating keys takes seconds and must not delay the first answer.
  if (keys.kind === 'create' && !stopping) {
    keyPreparation = startKeyPreparation(deps.logger, keys.missing);
  }
}

main().catch((error: unknown) => {
  // A setting that cannot be used (PORT in use, DATA_DIR not writable, ...) is one line that
  // says what to change; anything else is a fault of ours, with its stack.
  const text =
    error instanceof ConfigError
      ? `Cannot start: ${error.message}`
      : error instanceof Error
        ? (error.stack ?? error.message)
        : String(error);
  process.stderr.write(`${text}\n`);
  process.exit(1);
});
