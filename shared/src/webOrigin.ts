/**
 * The one rule for a web page's origin, wherever one is written down or admitted: the agent's
 * allowed origins, ticket servers and handshakes, the headless policy, and (server side) a
 * tenant's embedding origins and the page a signing ticket is for. Both sides must reduce an
 * origin the same way, or a ticket issued for a page would not match the page that shows it.
 */

/** Hosts of this machine: their pages may use plain http (development). */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The canonical origin, or why the value is not one a page may have. */
export type WebOriginCheck = { ok: true; origin: string } | { ok: false; reason: string };

/**
 * Reduces an origin to its canonical `scheme://host[:port]` form (lower case, default port
 * dropped). HTTPS only, except for pages served from this machine. Paths, queries, fragments
 * and credentials are refused rather than dropped: they mean the value is not the origin the
 * writer thinks it is.
 */
export function checkWebOrigin(value: string): WebOriginCheck {
  if (!URL.canParse(value)) return { ok: false, reason: `"${value}" is not an origin` };
  const url = new URL(value);
  if (url.username || url.password || url.search || url.hash || url.pathname !== '/') {
    return { ok: false, reason: `"${value}" is not an origin: only scheme, host and port` };
  }
  const secure = url.protocol === 'https:';
  const loopback = url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
  if (!secure && !loopback) {
    return { ok: false, reason: `"${value}" must use https (http only for localhost)` };
  }
  return { ok: true, origin: url.origin };
}
