/**
 * `npm run agent`: the desktop agent with its windows (Electron), or, only with the explicit
 * `--headless --policy FILE`, the core under plain Node answering from a policy file.
 */
import { parseArgs } from 'node:util';
import { version } from '../package.json';
import { ConfigurationError } from './core';
import { runHeadless } from './headless/runHeadless';
import { launchElectron } from './launchElectron';

const usage = `Usage: npm run agent [-- --headless --policy FILE]
  (no option)              the agent with its tray icon and windows (Electron)
  --headless --policy FILE the agent without windows: origins, consent and PINs from FILE`;

function fail(message: string, code = 2): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

async function main(): Promise<void> {
  let values: { headless?: boolean; policy?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        headless: { type: 'boolean' },
        policy: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    fail(`${(error as Error).message}\n${usage}`);
  }
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    return;
  }
  if (!values.headless) {
    if (values.policy !== undefined) fail(`--policy needs --headless\n${usage}`);
    process.exit(await launchElectron());
  }
  if (values.policy === undefined) fail(`--headless needs --policy FILE\n${usage}`);
  const log = (message: string) => process.stderr.write(`${new Date().toISOString()} ${message}\n`);
  let core: Awaited<ReturnType<typeof runHeadless>>;
  try {
    core = await runHeadless({ policyFile: values.policy, version, log });
  } catch (error) {
    if (error instanceof ConfigurationError) fail(error.message, 1);
    throw error;
  }
  process.stdout.write(`ESign Agent (headless) listening on ws://127.0.0.1:${core.port}\n`);
  const stop = () => {
    void core.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

void main();
