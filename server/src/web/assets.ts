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
};

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
    const type = contentTypes[path.extname(name)] ?? 'application/octet-stream';
    const body = await fs.promises.readFile(path.join(assetDir, name));
    const versioned = c.req.query('v') === hash;
    return c.body(body, 200, {
      'Content-Type': type,
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': versioned ? 'public, max-age=31536000, immutable' : 'no-cache',
      ETag: `"${hash}"`,
    });
  });
  return assets;
}
