import { appBase } from '../assets';
import type { WebContext } from '../context';
import { renderPage } from '../render';
import type { AccessLinkRefusal } from '../session/middleware';

/**
 * The one "not found" page: for an id that does not exist and for one this viewer may not see,
 * alike, so that a page never tells which.
 */
export function notFoundPage(c: WebContext): Response {
  const t = c.get('t');
  return renderPage(
    c,
    { title: t.common.notFound.title, status: 404 },
    <section class="card card-narrow problem">
      <h1>{t.common.notFound.title}</h1>
      <p>{t.common.notFound.text}</p>
      <p>
        <a class="button button-primary" href={`${appBase}/dashboard`}>
          {t.common.notFound.back}
        </a>
      </p>
    </section>,
  );
}

/** A request that could not be done, in plain words; the service's own message beneath. */
export function problemPage(
  c: WebContext,
  status: 400 | 403 | 409 | 410 | 413 | 415 | 422 | 429 | 500 | 503,
  text: string,
  detail?: string,
): Response {
  const t = c.get('t');
  return renderPage(
    c,
    { title: t.common.error.title, status },
    <section class="card card-narrow problem">
      <h1>{t.common.error.title}</h1>
      <p>{text}</p>
      {detail ? <p class="muted">{detail}</p> : null}
      <p>
        <a class="button button-secondary" href={`${appBase}/dashboard`}>
          {t.common.error.back}
        </a>
      </p>
    </section>,
  );
}

/** A `?at=` token that cannot open a session: expired, revoked, or its user locked. */
export function accessLinkPage(c: WebContext, reason: AccessLinkRefusal): Response {
  const t = c.get('t');
  return renderPage(
    c,
    { title: t.common.accessLink.title, status: reason === 'rateLimited' ? 429 : 401 },
    <section class="card card-narrow problem">
      <h1>{t.common.accessLink.title}</h1>
      <p>
        {reason === 'rateLimited'
          ? t.common.signIn.rateLimited(60)
          : reason === 'locked'
            ? t.common.accessLink.locked
            : t.common.accessLink.expired}
      </p>
      <p>
        <a class="button button-primary" href={`${appBase}/dang-nhap`}>
          {t.common.accessLink.signIn}
        </a>
      </p>
    </section>,
  );
}
