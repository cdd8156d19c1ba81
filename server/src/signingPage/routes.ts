import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { agentConnectSources } from '@esign/shared';
import { Hono } from 'hono';
import type { AppEnv } from '../context';
import { ApiError } from '../errors/apiError';
import { escapeHtml } from '../notify/messages';
import type { Config } from '../platform/config';

/**
 * The signing page behind `signingUrl`, served when APP_URL is this server's /app (the default):
 * the HTML and the browser bundle that scripts/build.mjs writes to server/dist/web/. The server
 * runs either as that bundle (server/dist) or from source (tests), hence the two places.
 */
const webDir = path.join(
  path.basename(__dirname) === 'dist' ? __dirname : path.resolve(__dirname, '../../dist'),
  'web',
);

/** The link's token: base64url; anything else is not a signing link (the rest of /app answers 404). */
const signingLinkPath = '/ky-so/phien/:token{[A-Za-z0-9_-]+}';
/** The e-mailed invitation: 32 random bytes, so exactly 43 base64url characters. */
const invitationLinkPath = '/ky-so/:token{[A-Za-z0-9_-]{43}}';
/** The page's `../signing-page.js`, seen from either depth of link. */
const signingScriptPaths = ['/ky-so/signing-page.js', '/signing-page.js'];

interface SigningPageFiles {
  html: string;
  script: string;
  contentSecurityPolicy: string;
}

/**
 * The page's settings, which its script reads from empty <meta> tags the server fills in: the
 * service's name (shown by the desktop agent) and the agent's installer link.
 */
function withSettings(html: string, config: Config): string {
  const settings = {
    'esign-service-name': config.serviceName,
    'esign-agent-download': config.agentDownloadUrl,
  };
  return Object.entries(settings).reduce(
    (page, [name, value]) =>
      page.replace(
        `<meta name="${name}" content="">`,
        `<meta name="${name}" content="${escapeHtml(value)}">`,
      ),
    html,
  );
}

/**
 * No inline script; the page's one <style> block is allowed by its hash. Nothing may frame the
 * page, and it talks only to this origin and to the desktop agent on its loopback ports (the
 * discovery probe over http:, the socket over ws:).
 */
function contentSecurityPolicyOf(html: string): string {
  const style = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1];
  const styleSource =
    style === undefined
      ? "'none'"
      : `'sha256-${crypto.createHash('sha256').update(style).digest('base64')}'`;
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src ${styleSource}`,
    "img-src 'self' data:",
    ["connect-src 'self'", ...agentConnectSources()].join(' '),
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function notBuilt(): never {
  throw new ApiError(
    404,
    'WEB_APP_NOT_AVAILABLE',
    'The signing page is not built: run `npm run build` (npm start builds it)',
  );
}

/** The token is in the page's URL: it must not be stored, nor leave as a Referer. */
const privateHeaders = {
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
};

/**
 * The page (at the session link and at the invitation link: one page, two entry modes) and its
 * script, mounted under /app by app.ts ahead of its 404 for the rest of /app.
 */
export function signingPageRoutes(): Hono<AppEnv> {
  let files: SigningPageFiles | undefined;
  const load = (): SigningPageFiles => {
    if (files) return files;
    let html: string;
    let script: string;
    try {
      html = fs.readFileSync(path.join(webDir, 'signing-page.html'), 'utf8');
      script = fs.readFileSync(path.join(webDir, 'signing-page.js'), 'utf8');
    } catch {
      return notBuilt();
    }
    files = { html, script, contentSecurityPolicy: contentSecurityPolicyOf(html) };
    return files;
  };
  const pages = new Hono<AppEnv>();
  for (const pagePath of [signingLinkPath, invitationLinkPath]) {
    pages.get(pagePath, (c) => {
      const { html, contentSecurityPolicy } = load();
      return c.body(withSettings(html, c.get('deps').config), 200, {
        ...privateHeaders,
        'Content-Type': 'text/html; charset=utf-8',
        'Content-Security-Policy': contentSecurityPolicy,
      });
    });
  }
  for (const scriptPath of signingScriptPaths) {
    pages.get(scriptPath, (c) =>
      c.body(load().script, 200, {
        ...privateHeaders,
        'Content-Type': 'text/javascript; charset=utf-8',
      }),
    );
  }
  return pages;
}
