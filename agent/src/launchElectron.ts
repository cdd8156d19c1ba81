import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { buildShell } from './shell/build';

export const AGENT_DIST = path.resolve(__dirname, '../dist');

/**
 * The Electron binary's path, or null when it is not installed (the `electron` package downloads
 * it at install time; ELECTRON_SKIP_BINARY_DOWNLOAD or an offline install leave it out).
 */
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
      'The Electron binary is not installed (npm install without ELECTRON_SKIP_BINARY_DOWNLOAD fetches it).\nWithout windows: npm run agent -- --headless --policy FILE\n',
    );
    return 1;
  }
  await buildShell(AGENT_DIST);
  const child = spawn(binary, [path.join(AGENT_DIST, 'electron/main.js')], { stdio: 'inherit' });
  return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
}
