import type { Hono } from 'hono';
import { z } from 'zod';
import {
  enforceRateLimit,
  guardCredentialCheck,
  RateLimited,
  type RateLimiter,
} from '../../auth/rateLimit';
import { AccountInactive, userOfPassword } from '../../auth/service';
import { Unauthenticated } from '../../errors/domainError';
import { appBase } from '../assets';
import { Notice } from '../components';
import { asAppContext, type WebContext, type WebEnv } from '../context';
import { renderPage } from '../render';
import { clearSessionCookie, setSessionCookie } from '../session/cookie';
import { accessLinkRefusals, safeNext } from '../session/middleware';
import { endWebSession, openWebSession } from '../session/service';
import { accessLinkPage } from './problems';

const SignInForm = z.object({
  username: z.string().trim().min(1).max(256),
  password: z.string().min(1).max(1024),
  next: z.string().max(2048).optional(),
});

type Problem = 'failed' | 'inactive' | 'missing' | { rateLimited: number } | null;

/** The sign-in page, its form's answer, and sign-out. */
export function signInPages(app: Hono<WebEnv>, limiter: RateLimiter): void {
  const show = (
    c: WebContext,
    options: { next: string; problem: Problem; username?: string; status?: 200 | 401 | 403 | 429 },
  ) => {
    const t = c.get('t');
    const { problem } = options;
    const ended = c.req.query('ended');
    const message =
      problem === null
        ? null
        : typeof problem === 'object'
          ? t.common.signIn.rateLimited(problem.rateLimited)
          : t.common.signIn[problem];
    return renderPage(
      c,
      { title: t.common.signIn.title, status: options.status ?? 200 },
      <section class="card card-narrow">
        <h1>{t.common.signIn.title}</h1>
        <p class="muted">{t.common.signIn.intro}</p>
        {ended === 'signed-out' ? (
          <Notice tone="success">{t.common.signIn.signedOut}</Notice>
        ) : null}
        {ended === 'session' ? <Notice tone="info">{t.common.signIn.sessionEnded}</Notice> : null}
        {message ? <Notice tone="danger">{message}</Notice> : null}
        <form method="post" action={`${appBase}/dang-nhap`} class="form-stack">
          <input type="hidden" name="next" value={options.next} />
          <label for="username">{t.common.signIn.username}</label>
          <input
            id="username"
            name="username"
            type="text"
            autocomplete="username"
            required
            value={options.username ?? ''}
            autofocus
          />
          <label for="password">{t.common.signIn.password}</label>
          <input
            id="password"
            name="password"
            type="password"
            autocomplete="current-password"
            required
          />
          <button type="submit" class="button button-primary">
            {t.common.signIn.submit}
          </button>
        </form>
      </section>,
    );
  };

  app.get('/dang-nhap', (c) => {
    const next = safeNext(c.req.query('next'));
    if (c.get('viewer')) return c.redirect(next, 303);
    return show(c, { next, problem: null });
  });

  app.post('/dang-nhap', async (c) => {
    const form = SignInForm.safeParse(await c.req.parseBody());
    const next = safeNext(form.success ? form.data.next : undefined);
    if (!form.success) return show(c, { next, problem: 'missing', status: 401 });
    const { username, password } = form.data;
    try {
      await enforceRateLimit(asAppContext(c), limiter, 'auth');
      const user = await guardCredentialCheck(asAppContext(c), () =>
        userOfPassword(c.get('deps'), username, password),
      );
      const opened = await openWebSession(c.get('deps'), {
        userId: user.id,
        credential: 'password',
      });
      setSessionCookie(c, opened.token);
      return c.redirect(next, 303);
    } catch (error) {
      if (error instanceof RateLimited) {
        const wait = error.retryAfterSeconds ?? 60;
        c.header('Retry-After', String(wait));
        return show(c, { next, username, problem: { rateLimited: wait }, status: 429 });
      }
      if (error instanceof AccountInactive) {
        return show(c, { next, username, problem: 'inactive', status: 403 });
      }
      if (error instanceof Unauthenticated) {
        return show(c, { next, username, problem: 'failed', status: 401 });
      }
      throw error;
    }
  });

  // Where a refused `?at=` token leads (session/middleware.ts), without the token.
  app.get('/lien-ket-truy-cap', (c) => {
    const reason = c.req.query('ly-do');
    const known = accessLinkRefusals.find((refusal) => refusal === reason);
    return accessLinkPage(c, known ?? 'expired');
  });

  app.post('/dang-xuat', async (c) => {
    const viewer = c.get('viewer');
    if (viewer) await endWebSession(c.get('deps'), viewer);
    clearSessionCookie(c);
    return c.redirect(`${appBase}/dang-nhap?ended=signed-out`, 303);
  });
}
