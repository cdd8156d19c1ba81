import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { buildShell } from './shell/build';

export const AGENT_DIST = path.resolve(__dirname, '../dist');

/**
 * How to get the Electron binary. npm never downloads it here: the root package.json's
 * `allowScripts` keeps the `electron` package's install script from running, so `npm install`
 * or `npm ci` leave only the package. Its own script fetches the binary when run by hand.
 */
export const ELECTRON_INSTALL_HINT =
  "npm does not run the electron package's install script (allowScripts in package.json), so npm install never downloads the binary; with network access run once: node node_modules/electron/install.js (it puts Electron into node_modules/electron/dist)";

/** The Electron binary's path, or null when it is not installed (ELECTRON_INSTALL_HINT). */
export function electronBinary(): string | null {
  try {
    const found = createRequire(__filename)('electron') as unknown;
    return typeof found === 'string' ? found : null;
  } catch {
    return null;
  }
}

/** `npm run agent` without --headless: builds the shell and runs it under Electron. */
export async function launchElectron(): Promise<number> {
  const binary = electronBinary();
  if (!binary) {
    process.stderr.write(
      `The Electron binary is not installed: ${ELECTRON_INSTALL_HINT}.\nWithout windows: npm run agent -- --headless --policy FILE\n`,
    );
    return 1;
  }
  await buildShell(AGENT_DIST);
  const child = spawn(binary, [path.join(AGENT_DIST, 'electron/main.js')], { stdio: 'inherit' });
  return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
}
