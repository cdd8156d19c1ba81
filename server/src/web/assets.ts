import fs from 'node:fs';
import path from 'node:path';
import { Hono } from 'hono';
import type { WebEnv } from './context';

/**
 * The browser files of the web application (scripts, the stylesheet, pdf.js) that
 * scripts/build.mjs writes to server/dist/web/app/ with a manifest of their content hashes. The
 * server runs either as that bundle (server/dist) or from source (tests), hence the two places.
 */
const assetDir = path.join(
  path.basename(__dirname) === 'dist' ? __dirname : path.resolve(__dirname, '../../dist'),
  'web',
  'app',
);

/** Where the app is mounted on this server; every link of the pages starts with it. */
export const appBase = '/app';

const contentTypes: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.map': 'application/json',
  '.bcmap': 'application/octet-stream',
  '.wasm': 'application/wasm',
  '.pfb': 'application/octet-stream',
  '.ttf': 'font/ttf',
};

/**
 * The compressed copies scripts/build.mjs writes beside a text file, best first, by the
 * Accept-Encoding token that takes them.
 */
const encodings = [
  { token: 'br', suffix: '.br' },
  { token: 'gzip', suffix: '.gz' },
] as const;

/** Whether a compressed copy exists, asked once per file and encoding. */
const compressedCopies = new Map<string, boolean>();

async function hasCopy(file: string): Promise<boolean> {
  let known = compressedCopies.get(file);
  if (known === undefined) {
    known = await fs.promises.access(file).then(
      () => true,
      () => false,
    );
    compressedCopies.set(file, known);
  }
  return known;
}

/** The encodings a request accepts (`q=0` refuses one). */
function acceptedEncodings(header: string | undefined): Set<string> {
  const accepted = new Set<string>();
  for (const part of (header ?? '').split(',')) {
    const [token, ...parameters] = part.trim().toLowerCase().split(';');
    const refused = parameters.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p));
    if (token && !refused) accepted.add(token);
  }
  return accepted;
}

/**
 * The policy of a worker started from one of our scripts (pdf.js's): a worker takes its CSP from
 * its own script's answer, not from the page. It fetches only from here and compiles
 * WebAssembly (pdf.js's image decoders), never evaluates strings. Page scripts ignore it.
 */
const workerPolicy = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'";

let manifest: Record<string, string> | undefined;

/** name → content hash, read once; empty when the app's browser files are not built. */
function hashes(): Record<string, string> {
  if (manifest) return manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(assetDir, 'manifest.json'), 'utf8')) as Record<
      string,
      string
    >;
  } catch {
    manifest = {};
  }
  return manifest;
}

/** The URL of a built browser file, versioned by its content so it can be cached for good. */
export function assetUrl(name: string): string {
  const hash = hashes()[name];
  return `${appBase}/assets/${name}${hash ? `?v=${hash}` : ''}`;
}

/** `/assets/<name>`: only names listed in the manifest, so no path is ever built from input. */
export function assetRoutes(): Hono<WebEnv> {
  const assets = new Hono<WebEnv>();
  assets.get('/assets/:name{[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*}', async (c) => {
    const name = c.req.param('name');
    const hash = hashes()[name];
    if (hash === undefined) return c.notFound();
    const extension = path.extname(name);
    const type = contentTypes[extension] ?? 'application/octet-stream';
    const file = path.join(assetDir, name);
    const accepted = acceptedEncodings(c.req.header('accept-encoding'));
    let encoding: (typeof encodings)[number] | undefined;
    for (const candidate of encodings) {
      if (accepted.has(candidate.token) && (await hasCopy(`${file}${candidate.suffix}`))) {
        encoding = candidate;
        break;
      }
    }
    const body = await fs.promises.readFile(encoding ? `${file}${encoding.suffix}` : file);
    const versioned = c.req.query('v') === hash;
    const headers: Record<string, string> = {
      'Content-Type': type,
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': versioned ? 'public, max-age=31536000, immutable' : 'no-cache',
      ETag: encoding ? `"${hash}-${encoding.token}"` : `"${hash}"`,
      Vary: 'Accept-Encoding',
    };
    if (encoding) headers['Content-Encoding'] = encoding.token;
    if (extension === '.js' || extension === '.mjs')
      headers['Content-Security-Policy'] = workerPolicy;
    return c.body(body, 200, headers);
  });
  return assets;
}
