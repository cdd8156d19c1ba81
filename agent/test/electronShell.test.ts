/**
 * The packaged shell under real Electron (Playwright's _electron). The Electron binary cannot be
 * downloaded in this environment, so the test is skipped, saying why, when it is absent.
 */
import fs from 'node:fs';
import path from 'node:path';
import { _electron } from 'playwright-core';
import { tempDir } from '../../test/support/tools';
import { ELECTRON_INSTALL_HINT, electronBinary } from '../src/launchElectron';
import { buildShell } from '../src/shell/build';

const binary = electronBinary();
const withElectron = binary ? it : it.skip;
if (!binary) {
  process.stderr.write(
    `electronShell.test.ts skipped: no Electron binary: ${ELECTRON_INSTALL_HINT}.\n`,
  );
}

withElectron(
  'starts in the tray with no window, one instance, sandboxed windows and the local server up (skipped without an Electron binary)',
  async () => {
    const work = tempDir('esign-electron-');
    const dist = path.join(work.dir, 'dist');
    await buildShell(dist);
    fs.mkdirSync(path.join(work.dir, 'config'));
    const app = await _electron.launch({
      executablePath: binary!,
      args: [path.join(dist, 'electron/main.js')],
      env: { ...process.env, XDG_CONFIG_HOME: path.join(work.dir, 'config') },
    });
    try {
      const state = await app.evaluate(({ app: electronApp, BrowserWindow }) => ({
        ready: electronApp.isReady(),
        windows: BrowserWindow.getAllWindows().length,
      }));
      expect(state).toEqual({ ready: true, windows: 0 });
      const discovery = await fetch('http://127.0.0.1:17891/');
      expect(await discovery.json()).toMatchObject({ name: 'ESign Agent' });
    } finally {
      await app.close();
      work.remove();
    }
  },
);
