import fs from 'node:fs';
import path from 'node:path';
import { Hono } from 'hono';
import type { AppEnv } from '../context';

const assetTypes: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>API reference</title>
  <link rel="stylesheet" href="/api/docs/assets/swagger-ui.css">
  <link rel="icon" href="/api/docs/assets/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/api/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/api/docs/assets/swagger-ui-standalone-preset.js"></script>
  <script src="/api/docs/assets/init.js"></script>
</body>
</html>`;

// In a file of its own so a strict Content-Security-Policy (no inline script) can apply.
// validatorUrl null: by default Swagger UI sends the document's URL to validator.swagger.io.
const init = `window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#swagger-ui',
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout' });`;

/** The docs UI, served from the installed swagger-ui-dist so it works with no network. */
export function docsRoutes(): Hono<AppEnv> {
  // Only the folder is needed: requiring swagger-ui-dist itself would load its 1.5 MB browser
  // bundle into the server at start.
  let assetsDir: string | undefined;
  const docs = new Hono<AppEnv>();
  const csp = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'";
  docs.get('/', (c) => {
    c.header('Content-Security-Policy', csp);
    return c.html(page);
  });
  docs.get('/assets/init.js', (c) =>
    c.body(init, 200, { 'Content-Type': assetTypes['swagger-ui-bundle.js']! }),
  );
  docs.get('/assets/:name', (c) => {
    const name = c.req.param('name');
    const type = assetTypes[name];
    if (!type) return c.notFound();
    assetsDir ??= path.dirname(require.resolve('swagger-ui-dist/package.json'));
    const bytes = fs.readFileSync(path.join(assetsDir, name));
    return c.body(bytes, 200, { 'Content-Type': type, 'Cache-Control': 'public, max-age=86400' });
  });
  return docs;
}
