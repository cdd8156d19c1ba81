import { isLocale, messagesOf } from '@esign/shared/messages';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { holderOfAnyToken } from '../../auth/authenticate';
import { findUserById, userStatus } from '../../auth/queries';
import {
  enforceRateLimit,
  guardCredentialCheck,
  RateLimited,
  type RateLimiter,
} from '../../auth/rateLimit';
import { verifyTokenClaims } from '../../auth/tokens';
import { Unauthenticated } from '../../errors/domainError';
import { constantTimeEqual } from '../../platform/secrets';
import { appBase } from '../assets';
import { asAppContext, type WebEnv } from '../context';
import { languageCookie, sessionCookieOf, setLanguageCookie, setSessionCookie } from './cookie';
import { openWebSession, viewerOfSessionToken } from './service';

/** The same URL without one query parameter, as a path the browser goes back to. */
export function withoutParameter(url: string, name: string): string {
  const target = new URL(url);
  target.searchParams.delete(name);
  return `${target.pathname}${target.search}`;
}

/**
 * The language: `?lang=vi|en` sets it (and the browser comes back without the parameter), the
 * cookie keeps it, Vietnamese otherwise.
 */
export function pickLanguage(): MiddlewareHandler<WebEnv> {
  return async (c, next) => {
    const asked = c.req.query('lang');
    if (c.req.method === 'GET' && asked !== undefined) {
      if (isLocale(asked)) setLanguageCookie(c, asked);
      return c.redirect(withoutParameter(c.req.url, 'lang'), 303);
    }
    const kept = getCookie(c, languageCookie);
    const locale = isLocale(kept) ? kept : 'vi';
    c.set('locale', locale);
    c.set('t', messagesOf(locale));
    await next();
  };
}

/** Reads the session cookie: `viewer` is the signed-in person or null. */
export function loadViewer(): MiddlewareHandler<WebEnv> {
  return async (c, next) => {
    const token = sessionCookieOf(c);
    c.set('viewer', token ? await viewerOfSessionToken(c.get('deps'), token) : null);
    await next();
  };
}

/** Why a token handed to the app was refused, for the page that says so. */
export const accessLinkRefusals = ['expired', 'locked', 'rateLimited'] as const;
export type AccessLinkRefusal = (typeof accessLinkRefusals)[number];

/** The page that says why, reached without the token in its URL. */
export const accessLinkPath = `${appBase}/lien-ket-truy-cap`;

/**
 * `?at=<access token>` on any page: the token (a user's access token or a partner token) is
 * exchanged for a session cookie and the browser is sent to the same URL without it, so the
 * token stays in no address bar, history entry, log or Referer. Failed exchanges count against
 * the client address like any failed credential check; a refused token sends the browser to a
 * page that says why, the token gone from the address bar there too.
 */
export function exchangeAccessToken(limiter: RateLimiter): MiddlewareHandler<WebEnv> {
  return async (c, next) => {
    const token = c.req.query('at');
    if (token === undefined || c.req.method !== 'GET') return next();
    let holder: Awaited<ReturnType<typeof holderOfAnyToken>>;
    try {
      await enforceRateLimit(asAppContext(c), limiter, 'auth');
      holder = await guardCredentialCheck(asAppContext(c), () =>
        holderOfAnyToken(c.get('deps'), token),
      );
    } catch (error) {
      let reason: AccessLinkRefusal | undefined;
      if (error instanceof RateLimited) reason = 'rateLimited';
      if (error instanceof Unauthenticated) {
        reason = (await tokenOfLockedUser(c, token)) ? 'locked' : 'expired';
      }
      if (reason === undefined) throw error;
      return c.redirect(`${accessLinkPath}?ly-do=${reason}`, 303);
    }
    const opened = await openWebSession(c.get('deps'), {
      userId: holder.actor.id,
      credential: holder.kind,
      apiKeyId: holder.keyId,
      notAfter: holder.expiresAt,
    });
    setSessionCookie(c, opened.token);
    return c.redirect(withoutParameter(c.req.url, 'at'), 303);
  };
}

/** Whether a refused token is sound but its user locked: the page then says that instead. */
async function tokenOfLockedUser(c: Context<WebEnv>, token: string): Promise<boolean> {
  const deps = c.get('deps');
  const claims =
    (await verifyTokenClaims(deps, token, 'access')) ??
    (await verifyTokenClaims(deps, token, 'partner'));
  if (!claims) return false;
  const user = await findUserById(deps.db, claims.userId);
  return user?.status === userStatus.locked;
}

/** Thrown when a state change comes without the page's proof that it came from our own form. */
export class CsrfRefused extends Error {
  constructor() {
    super('cross-site request refused');
  }
}

function sameOrigin(c: Context<WebEnv>): boolean {
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined) return site === 'same-origin';
  const origin = c.req.header('origin');
  // Browsers send one of the two with every POST; a request with neither is no browser's form.
  return origin !== undefined && origin === new URL(c.req.url).origin;
}

/**
 * Every state change (any method but GET and HEAD) must come from one of our pages: the browser
 * says the request is same-origin, and with a session, the form or script sends the session's
 * CSRF token (`_csrf` field or `X-CSRF-Token` header).
 */
export function guardStateChanges(): MiddlewareHandler<WebEnv> {
  return async (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    if (!sameOrigin(c)) throw new CsrfRefused();
    const viewer = c.get('viewer');
    if (viewer) {
      const header = c.req.header('x-csrf-token');
      const sent = header ?? (await formField(c, '_csrf'));
      if (sent === undefined || !constantTimeEqual(sent, viewer.csrfToken)) {
        throw new CsrfRefused();
      }
    }
    await next();
  };
}

/** One text field of a urlencoded or multipart form (parsed once; handlers read it again). */
export async function formField(c: Context<WebEnv>, name: string): Promise<string | undefined> {
  const type = c.req.header('content-type') ?? '';
  if (!type.startsWith('application/x-www-form-urlencoded') && !type.startsWith('multipart/')) {
    return undefined;
  }
  const body = await c.req.parseBody();
  const value = body[name];
  return typeof value === 'string' ? value : undefined;
}

/** The path to come back to after signing in: one of our pages, never another site. */
export function safeNext(next: string | undefined): string {
  if (!next?.startsWith(`${appBase}/`) || next.startsWith('//') || next.includes('\\')) {
    return `${appBase}/dashboard`;
  }
  return next;
}

/** Pages for signed-in people: anyone else is sent to sign in and brought back. */
export function requireViewer(): MiddlewareHandler<WebEnv> {
  return async (c, next) => {
    if (c.get('viewer')) return next();
    const here = new URL(c.req.url);
    const back = encodeURIComponent(`${here.pathname}${here.search}`);
    return c.redirect(`${appBase}/dang-nhap?next=${back}`, 303);
  };
}
