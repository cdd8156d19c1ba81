import type { MiddlewareHandler } from 'hono';
import type { WebEnv } from './context';

/**
 * Every page: no inline script or style, nothing from another origin, framed only by the origins
 * the page allows (the tenant's registered embedding domains), no token in a Referer, never
 * stored by a cache.
 */
export function contentSecurityPolicy(options: {
  frameAncestors: string[];
  extraConnectSources: string[];
}): string {
  const ancestors = options.frameAncestors.length > 0 ? options.frameAncestors.join(' ') : "'none'";
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    ['connect-src', "'self'", ...options.extraConnectSources].join(' '),
    "worker-src 'self'",
    "frame-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${ancestors}`,
  ].join('; ');
}

/** Sets the page headers after the handler ran, from what it decided (frame ancestors, agent). */
export function pageHeaders(): MiddlewareHandler<WebEnv> {
  return async (c, next) => {
    c.set('frameAncestors', []);
    c.set('extraConnectSources', []);
    await next();
    const headers = c.res.headers;
    const type = headers.get('content-type') ?? '';
    // A page that decided its own policy (the signing page) keeps it.
    if (!headers.has('Cache-Control')) headers.set('Cache-Control', 'no-store');
    headers.set('Referrer-Policy', 'no-referrer');
    headers.set('X-Content-Type-Options', 'nosniff');
    if (type.startsWith('text/html') && !headers.has('Content-Security-Policy')) {
      headers.set(
        'Content-Security-Policy',
        contentSecurityPolicy({
          frameAncestors: c.get('frameAncestors'),
          extraConnectSources: c.get('extraConnectSources'),
        }),
      );
    }
  };
}
