/**
 * `npm run build`: bundles the server (`server/src/main.ts`), the operator CLI
 * (`server/src/admin/cli.ts`), the server's key-preparation child (`server/src/prepareKeys.ts`)
 * and its PDF worker threads (`server/src/pdf/worker/entry.ts`) with esbuild into `server/dist/` (git-ignored), so `npm start` and `npm run admin` run plain
 * JavaScript on Node 20, without tsx.
 *
 * `--if-stale` (what `prestart` and `preadmin` pass) builds only when the last build is missing
 * or one of its inputs changed since: a source file, a package install (the lock files) or this
 * script. Plain JavaScript, so it also runs after `npm ci --omit=dev` (esbuild is a dependency).
 *
 * Bundled: our sources, the workspace package @esign/shared (its main is TypeScript), and the
 * pure-JS packages every start loads (hono, zod, kysely, jose, prom-client, ...): one file to
 * read instead of hundreds cuts the time to load the code by about a third. Left in node_modules: what our
 * sources import besides those (better-sqlite3 is native, pino starts worker threads from its own
 * files, swagger-ui-dist and dejavu-fonts-ttf are read as files, nodemailer and pdf-lib load on
 * first use).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'server/dist');
const manifestFile = path.join(outdir, 'build.json');
const entryPoints = {
  main: 'server/src/main.ts',
  cli: 'server/src/admin/cli.ts',
  // The child process the server starts when its signing keys are missing.
  prepareKeys: 'server/src/prepareKeys.ts',
  // The PDF reader's worker threads (server/src/pdf/worker/pool.ts starts them from here).
  pdfWorker: 'server/src/pdf/worker/entry.ts',
};

/**
 * The web application's browser files: each `server/web/app/*.ts` is one page script, bundled
 * with what it imports (the signing page's modules live in server/web/signing-page/);
 * `styles.css` and whatever `appCopies` lists are copied as they are. All land in
 * server/dist/web/app/ beside a manifest of their content hashes (server/src/web/assets.ts).
 */
const appSource = 'server/web/app';
/**
 * Files copied from packages into the app's browser files: name there → path from the root.
 * pdf.js (the PDF preview, server/web/app/preview.ts): its main-thread module, loaded by the
 * preview only when a page shows a PDF; its worker; the WebAssembly image decoders (JPEG 2000,
 * JBIG2: scanned documents) and the standard fonts, which the worker fetches only for a file
 * that needs them. No CMaps: they serve CJK fonts that a file does not embed, and Vietnamese text
 * in a PDF is always drawn with an embedded font (docs/decisions.md).
 */
const pdfjs = 'node_modules/pdfjs-dist';
const appCopies = {
  'pdfjs/pdf.min.mjs': `${pdfjs}/build/pdf.min.mjs`,
  'pdfjs/pdf.worker.min.mjs': `${pdfjs}/build/pdf.worker.min.mjs`,
  'pdfjs/LICENSE': `${pdfjs}/LICENSE`,
  ...Object.fromEntries(
    ['openjpeg.wasm', 'jbig2.wasm', 'jbig2_nowasm_fallback.js'].map((name) => [
      `pdfjs/wasm/${name}`,
      `${pdfjs}/wasm/${name}`,
    ]),
  ),
  ...Object.fromEntries(
    [
      'FoxitDingbats.pfb',
      'FoxitFixed.pfb',
      'FoxitFixedBold.pfb',
      'FoxitFixedBoldItalic.pfb',
      'FoxitFixedItalic.pfb',
      'FoxitSerif.pfb',
      'FoxitSerifBold.pfb',
      'FoxitSerifBoldItalic.pfb',
      'FoxitSerifItalic.pfb',
      'FoxitSymbol.pfb',
      'LiberationSans-Bold.ttf',
      'LiberationSans-BoldItalic.ttf',
      'LiberationSans-Italic.ttf',
      'LiberationSans-Regular.ttf',
    ].map((name) => [`pdfjs/standard_fonts/${name}`, `${pdfjs}/standard_fonts/${name}`]),
  ),
};
/**
 * Text files are also written compressed beside themselves (`.br`, `.gz`), once at build time, and
 * served so to browsers that accept it (server/src/web/assets.ts): pdf.js is 1.7 MB as it is.
 */
const compressible = /\.(js|mjs|css|json|pfb|ttf)$/;

/** Packages our sources import that go into the bundle, with whatever they import in turn. */
const bundled = /^(hono|@hono\/[^/]+|zod|kysely|jose|prom-client)(\/|$)/;
/** Never bundled, whoever imports them. */
const neverBundled =
  /^(better-sqlite3|pino|nodemailer|pdf-lib|@pdf-lib\/fontkit|swagger-ui-dist|dejavu-fonts-ttf)(\/|$)/;
/** Files whose change makes any build stale besides its own inputs. */
const alwaysWatched = ['package-lock.json', 'node_modules/.package-lock.json', 'scripts/build.mjs'];

const inNodeModules = (file) => file.split(path.sep).includes('node_modules');

const externals = {
  name: 'externals',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:') || neverBundled.test(args.path)) {
        return { path: args.path, external: true };
      }
      if (args.path.startsWith('@esign/') || bundled.test(args.path)) return undefined;
      // A dependency of a bundled package is bundled too: it may not be hoisted where
      // server/dist can require it.
      if (inNodeModules(args.importer)) return undefined;
      return { path: args.path, external: true };
    });
  },
};

function mtime(file) {
  try {
    return fs.statSync(path.join(root, file)).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Why the last build cannot be used, or null when it can. */
function staleness() {
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
  } catch {
    return 'no build yet';
  }
  const outputs = [
    ...Object.keys(entryPoints).map((name) => `server/dist/${name}.js`),
    'server/dist/web/app/manifest.json',
  ];
  for (const output of outputs) {
    if (mtime(output) === undefined) return `${output} is missing`;
  }
  // Packages inside node_modules change only through an install, which the lock files show.
  const watched = [...manifest.inputs.filter((file) => !inNodeModules(file)), ...alwaysWatched];
  for (const file of watched) {
    const changed = mtime(file);
    if (changed === undefined && !alwaysWatched.includes(file)) return `${file} is gone`;
    if (changed !== undefined && changed > manifest.builtAt) return `${file} changed`;
  }
  return null;
}

/** The short content hash of a browser file: its version in URLs and the manifest. */
function hashOf(contents) {
  return crypto.createHash('sha256').update(contents).digest('hex').slice(0, 16);
}

/** Writes to a temporary name and renames, so a concurrent start never reads half a file. */
function writeAtomically(file, contents) {
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, contents);
  fs.renameSync(temporary, file);
}

async function build() {
  const builtAt = Date.now();
  // Loaded only to build: the check alone runs before every start.
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints,
    outdir,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: true,
    sourcesContent: false,
    // Whitespace and comments go (stack traces map back through the source map): V8 keeps the
    // whole source text of a script in memory for as long as it runs.
    minifyWhitespace: true,
    metafile: true,
    write: false,
    logLevel: 'warning',
    plugins: [externals],
  });
  fs.mkdirSync(outdir, { recursive: true });
  for (const file of result.outputFiles) {
    // One character outside Latin-1 (esbuild escapes strings, not regular expressions) makes V8
    // hold the whole source at two bytes a character: megabytes more resident memory.
    if (file.path.endsWith('.js') && /[\u0100-\uffff]/.test(file.text)) {
      process.stderr.write(
        `${path.relative(root, file.path)}: not all Latin-1, held at 2 bytes a character\n`,
      );
    }
    writeAtomically(file.path, file.contents);
  }
  const appInputs = await buildApp(esbuild);
  const inputs = [...Object.keys(result.metafile.inputs), ...appInputs].sort();
  writeAtomically(manifestFile, `${JSON.stringify({ builtAt, inputs }, null, 1)}\n`);
  return { ms: Date.now() - builtAt, inputs: inputs.length };
}

/** The web application's scripts, stylesheet and copied files, with their manifest. */
async function buildApp(esbuild) {
  const appDir = path.join(outdir, 'web', 'app');
  fs.mkdirSync(appDir, { recursive: true });
  const scripts = fs
    .readdirSync(path.join(root, appSource))
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
    .map((name) => `${appSource}/${name}`);
  // The copies first: the scripts are told their versions (the preview imports pdf.js by URL).
  const copies = new Map(
    Object.entries(appCopies).map(([name, from]) => [name, fs.readFileSync(path.join(root, from))]),
  );
  const versions = Object.fromEntries(
    [...copies].map(([name, contents]) => [name, hashOf(contents)]),
  );
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: scripts,
    outdir: appDir,
    define: { APP_ASSET_VERSIONS: JSON.stringify(versions) },
    bundle: true,
    platform: 'browser',
    target: 'es2022',
    format: 'iife',
    minify: true,
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  const files = new Map(
    result.outputFiles.map((file) => [path.relative(appDir, file.path), file.contents]),
  );
  files.set('styles.css', fs.readFileSync(path.join(root, appSource, 'styles.css')));
  for (const [name, contents] of copies) files.set(name, contents);
  const manifest = {};
  const zlib = await import('node:zlib');
  for (const [name, contents] of files) {
    fs.mkdirSync(path.dirname(path.join(appDir, name)), { recursive: true });
    writeAtomically(path.join(appDir, name), contents);
    manifest[name] = hashOf(contents);
    if (compressible.test(name) && contents.length > 1024) {
      const brotli = zlib.brotliCompressSync(contents, {
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: contents.length,
        },
      });
      writeAtomically(path.join(appDir, `${name}.br`), brotli);
      writeAtomically(path.join(appDir, `${name}.gz`), zlib.gzipSync(contents, { level: 9 }));
    }
  }
  writeAtomically(path.join(appDir, 'manifest.json'), `${JSON.stringify(manifest, null, 1)}\n`);
  return [
    // Not `<define:…>`: esbuild names the defined values among its inputs.
    ...Object.keys(result.metafile.inputs).filter((input) => !input.startsWith('<')),
    `${appSource}/styles.css`,
    ...Object.values(appCopies),
  ];
}

const ifStale = process.argv.includes('--if-stale');
const reason = ifStale ? staleness() : 'asked';
if (reason !== null) {
  const { ms, inputs } = await build();
  // stderr: `npm run -s admin -- ... --json` must print only the command's JSON on stdout.
  process.stderr.write(`Built server/dist (${reason}): ${inputs} files in ${ms} ms\n`);
}
