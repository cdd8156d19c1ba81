import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';

const source = path.resolve(__dirname, '..');

/**
 * Bundles the shell into `outdir` (agent/dist): `electron/main.js` and `electron/preload.js`
 * for Electron, `renderer/` (window.html, .css, .js) for its windows and the browser tests.
 * Native and Electron modules stay outside the bundle; our TypeScript, shared included, goes in.
 */
export async function buildShell(
  outdir: string,
  parts: { electron: boolean } = { electron: true },
) {
  const renderer = path.join(outdir, 'renderer');
  await mkdir(renderer, { recursive: true });
  await build({
    entryPoints: [path.join(source, 'shell/renderer/window.ts')],
    outdir: renderer,
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'chrome120',
    logLevel: 'warning',
  });
  for (const file of ['window.html', 'window.css']) {
    await copyFile(path.join(source, 'shell/renderer', file), path.join(renderer, file));
  }
  if (!parts.electron) return;
  await build({
    entryPoints: {
      main: path.join(source, 'electron/main.ts'),
      preload: path.join(source, 'electron/preload.ts'),
    },
    outdir: path.join(outdir, 'electron'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['electron', 'graphene-pk11', 'pkcs11js', 'ws', 'bufferutil', 'utf-8-validate'],
    sourcemap: true,
    logLevel: 'warning',
  });
}
