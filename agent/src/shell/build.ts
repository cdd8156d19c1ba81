import { copyFile, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';

const source = path.resolve(__dirname, '..');

/**
 * Left in node_modules, whoever imports them: Electron itself, the native PKCS#11 binding, and
 * ws (it loads its optional native helpers by name). electron-builder packages them as the
 * agent's production dependencies.
 */
const EXTERNAL = ['electron', 'graphene-pk11', 'pkcs11js', 'ws', 'bufferutil', 'utf-8-validate'];

/**
 * Bundles the shell into `outdir` (agent/dist): `electron/main.js` and `electron/preload.js`
 * for Electron, `renderer/` (window.html, .css, .js) for its windows and the browser tests.
 * Our TypeScript, @esign/shared included (its main is TypeScript), and the pure-JS packages go in.
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
  await buildForNode(path.join(outdir, 'electron'), {
    main: path.join(source, 'electron/main.ts'),
    preload: path.join(source, 'electron/preload.ts'),
  });
}

/**
 * `npm run build -w agent`: the whole agent into `outdir`, emptied first: the shell (above) and
 * `core/index.js`, the core for plain Node (headless use, and a check that it never needs
 * Electron). electron-builder.yml packages `dist/**` and starts `dist/electron/main.js`.
 */
export async function buildAgent(outdir: string): Promise<void> {
  await rm(outdir, { recursive: true, force: true });
  await buildShell(outdir);
  await buildForNode(path.join(outdir, 'core'), { index: path.join(source, 'core/index.ts') });
}

function buildForNode(outdir: string, entryPoints: Record<string, string>) {
  return build({
    entryPoints,
    outdir,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: EXTERNAL,
    sourcemap: true,
    logLevel: 'warning',
  });
}

if (require.main === module) {
  const outdir = path.resolve(source, '../dist');
  const started = Date.now();
  buildAgent(outdir).then(
    () =>
      process.stderr.write(
        `Built ${path.relative(process.cwd(), outdir) || '.'} in ${Date.now() - started} ms\n`,
      ),
    (error: unknown) => {
      process.stderr.write(`${String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
