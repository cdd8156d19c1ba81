import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { WebEnv } from '../context';

/**
 * The session cookie: HttpOnly always. Over HTTPS it is `__Host-` prefixed, Secure and
 * `SameSite=None; Partitioned`, so a page embedded on a partner's site keeps its own session
 * (partitioned by that site, CHIPS) and nobody else's; over plain HTTP (development) it is
 * `SameSite=Lax`. No Max-Age: it ends with the browser, and the server ends it sooner.
 */
export function overHttps(c: Context<WebEnv>): boolean {
  return c.get('deps').config.publicUrl.startsWith('https:');
}

function sessionCookieName(c: Context<WebEnv>): string {
  return overHttps(c) ? '__Host-esign_session' : 'esign_session';
}

export function sessionCookieOf(c: Context<WebEnv>): string | undefined {
  return getCookie(c, sessionCookieName(c));
}

export function setSessionCookie(c: Context<WebEnv>, token: string): void {
  if (overHttps(c)) {
    setCookie(c, sessionCookieName(c), token, {
      path: '/',
      httpOnly: true,
      secure: true,
      sameSite: 'None',
      partitioned: true,
    });
  } else {
    setCookie(c, sessionCookieName(c), token, { path: '/', httpOnly: true, sameSite: 'Lax' });
  }
}

export function clearSessionCookie(c: Context<WebEnv>): void {
  deleteCookie(c, sessionCookieName(c), {
    path: '/',
    ...(overHttps(c) ? { secure: true, sameSite: 'None', partitioned: true } : {}),
  });
}

/** The language the viewer picked; not a secret, readable for a year. */
export const languageCookie = 'esign_lang';

export function setLanguageCookie(c: Context<WebEnv>, locale: string): void {
  setCookie(c, languageCookie, locale, {
    path: '/',
    maxAge: 365 * 24 * 3600,
    sameSite: overHttps(c) ? 'None' : 'Lax',
    ...(overHttps(c) ? { secure: true, partitioned: true } : {}),
  });
}
