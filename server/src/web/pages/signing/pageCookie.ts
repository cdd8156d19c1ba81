import { getCookie, setCookie } from 'hono/cookie';
import type { HeldCredential } from '../../../sessions/signingPage';
import type { WebContext } from '../../context';
import { overHttps } from '../../session/cookie';

/**
 * The page credential of the session a browser opened on one signing page, kept in a cookie
 * whose Path is that page's own path: the page and its files (`…/tai-lieu`, `…/ban-da-ky`) get
 * it, no other page does, and two pages open side by side keep their own. HttpOnly; over HTTPS
 * Secure and `SameSite=None; Partitioned` (a page framed by a partner keeps its own, partitioned
 * by that site), `Lax` over plain HTTP. It ends with the browser; the session it names ends
 * sooner (30 minutes) and afterwards only lets the page show what became of it.
 */
function cookieName(c: WebContext): string {
  return overHttps(c) ? '__Secure-esign_signing' : 'esign_signing';
}

function attributes(c: WebContext, path: string) {
  return overHttps(c)
    ? { path, httpOnly: true, secure: true, sameSite: 'None' as const, partitioned: true }
    : { path, httpOnly: true, sameSite: 'Lax' as const };
}

/** Session ids and page credentials are base64url: the cookie is `<sessionId>.<credential>`. */
const held = /^([A-Za-z0-9_-]{16,128})\.([A-Za-z0-9_-]{16,128})$/;

export function heldCredentialOf(c: WebContext): HeldCredential | undefined {
  const match = held.exec(getCookie(c, cookieName(c)) ?? '');
  return match ? { sessionId: match[1]!, credential: match[2]! } : undefined;
}

export function keepCredential(
  c: WebContext,
  pagePath: string,
  started: { sessionId: string; pageCredential: string },
): void {
  setCookie(
    c,
    cookieName(c),
    `${started.sessionId}.${started.pageCredential}`,
    attributes(c, pagePath),
  );
}
