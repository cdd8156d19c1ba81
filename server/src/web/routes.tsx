import { CodedError } from '@esign/shared';
import { Hono } from 'hono';
import type { RateLimiter } from '../auth/rateLimit';
import { DomainError } from '../errors/domainError';
import { bodyRefusalOf } from '../http/bodyLimit';
import { errorAnswer, isErrorCode } from '../http/errorStatuses';
import { appBase, assetRoutes } from './assets';
import type { WebContext, WebEnv } from './context';
import { frameForViewer } from './embedding';
import { contractsPages } from './pages/contracts';
import { dashboardPages } from './pages/dashboard';
import { dossierPages } from './pages/dossiers';
import { notFoundPage, problemPage } from './pages/problems';
import { signInPages } from './pages/signIn';
import { signingPages } from './pages/signing';
import { taskPages } from './pages/tasks';
import { verifyPages } from './pages/verifyRoutes';
import { pageHeaders } from './security';
import {
  CsrfRefused,
  exchangeAccessToken,
  guardStateChanges,
  loadViewer,
  pickLanguage,
  requireViewer,
} from './session/middleware';

/** Whether the page's own script asked (it wants the API's JSON error, not a page). */
function wantsJson(c: WebContext): boolean {
  return (c.req.header('accept') ?? '').includes('application/json');
}

/** Statuses an error page answers with: the service's own, when a page can say it. */
const pageStatuses = new Set([400, 409, 410, 413, 415, 422, 429, 503] as const);
type PageStatus = typeof pageStatuses extends Set<infer S> ? S : never;

/** Answers a page's failure: not found alike for missing and forbidden, the rest in plain words. */
function answerFailure(caught: Error, c: WebContext): Response {
  const t = c.get('t');
  // A refused body is answered as such, whatever its reader made of the cut-off stream.
  const error = bodyRefusalOf(c) ?? caught;
  if (error instanceof CsrfRefused) {
    if (wantsJson(c)) {
      const answer = errorAnswer(new DomainError('CSRF_REFUSED', t.common.error.csrf));
      return c.json(answer.body, answer.status);
    }
    return problemPage(c, 403, t.common.error.csrf);
  }
  if (error instanceof CodedError && isErrorCode(error.code)) {
    const answer = errorAnswer(error);
    if (wantsJson(c)) {
      for (const [name, value] of Object.entries(answer.headers)) c.header(name, value);
      return c.json(answer.body, answer.status);
    }
    if (answer.status === 404 || answer.status === 403) return notFoundPage(c);
    if (pageStatuses.has(answer.status as PageStatus)) {
      return problemPage(c, answer.status as PageStatus, t.common.error.retry, error.message);
    }
  }
  c.get('logger').error({ err: error }, 'web page failed');
  return problemPage(c, 500, t.common.error.unexpected, t.common.error.retry);
}

/**
 * The web application under /app: sign-in, the pages of signed-in people, the signing page
 * anyone with a link may open, and their browser files. Every page shares the layout, the
 * language choice, the session cookie and the CSRF guard.
 */
export function webRoutes(limiter: RateLimiter): Hono<WebEnv> {
  const web = new Hono<WebEnv>();
  web.onError(answerFailure);
  web.route('/', assetRoutes());
  web.use(pageHeaders());
  web.use(pickLanguage());
  web.use(exchangeAccessToken(limiter));
  web.use(loadViewer());
  web.use(frameForViewer());
  // Anyone's, and its POST changes nothing: before the CSRF guard, which would read its upload.
  verifyPages(web, limiter);
  web.use(guardStateChanges());

  // Anyone: sign-in, and the signing page behind a link.
  signInPages(web, limiter);
  signingPages(web, limiter);

  // Signed-in people only.
  const signedIn = new Hono<WebEnv>();
  signedIn.use(requireViewer());
  signedIn.get('/', (c) => c.redirect(`${appBase}/dashboard`, 303));
  dashboardPages(signedIn);
  contractsPages(signedIn);
  dossierPages(signedIn);
  taskPages(signedIn);
  web.route('/', signedIn);

  web.all('*', (c) => notFoundPage(c));
  return web;
}
