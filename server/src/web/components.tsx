import type { Locale, Messages } from '@esign/shared/messages';
import type { Child, FC } from 'hono/jsx';
import { formatDateTime } from './dateTime';

/** An instant, in Vietnam's zone on the server; the page's script rewrites it in the viewer's. */
export const DateTime: FC<{
  iso: string | null | undefined;
  locale: Locale;
  dateOnly?: boolean;
}> = ({ iso, locale, dateOnly }) => {
  if (!iso) return <span class="muted">—</span>;
  return (
    <time datetime={iso} data-local={dateOnly ? 'date' : 'datetime'}>
      {formatDateTime(iso, locale, dateOnly)}
    </time>
  );
};

/** The hidden field every state-changing form carries (checked by the CSRF guard). */
export const CsrfField: FC<{ token: string }> = ({ token }) => (
  <input type="hidden" name="_csrf" value={token} />
);

export type Tone = 'neutral' | 'info' | 'success' | 'warning' | 'danger';

/** A state as a coloured label; the colour is never the only thing that tells it. */
export const Badge: FC<{ tone: Tone; children?: Child }> = ({ tone, children }) => (
  <span class={`badge badge-${tone}`}>{children}</span>
);

/** A notice above a page's content: what just happened, or what went wrong. */
export const Notice: FC<{ tone: Tone; children?: Child }> = ({ tone, children }) => (
  <div class={`notice notice-${tone}`} role={tone === 'danger' ? 'alert' : 'status'}>
    {children}
  </div>
);

/**
 * Previous / next links of a list, keeping its filters. `query` holds the list's current
 * parameters; the page number is replaced. A list that stops counting (`more`: more than
 * `total` match) says so and shows the page without the number of pages; `next` then says
 * whether a next page exists.
 */
export const Pager: FC<{
  t: Messages;
  page: number;
  pageSize: number;
  total: number;
  path: string;
  query: Record<string, string | undefined>;
  more?: boolean;
  next?: boolean;
}> = ({ t, page, pageSize, total, path, query, more, next }) => {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const hasNext = next ?? page < pages;
  const link = (target: number) => {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined && value !== '' && name !== 'page') params.set(name, value);
    }
    if (target > 1) params.set('page', String(target));
    const search = params.toString();
    return search ? `${path}?${search}` : path;
  };
  return (
    <nav class="pager" aria-label={t.common.paging.label}>
      <span class="muted">
        {more ? t.common.paging.moreThan(total) : t.common.paging.total(total)}
      </span>
      {page > 1 ? (
        <a class="button button-secondary" href={link(page - 1)} rel="prev">
          {t.common.paging.previous}
        </a>
      ) : null}
      <span aria-current="page">
        {more ? t.common.paging.pageOnly(page) : t.common.paging.page(Math.min(page, pages), pages)}
      </span>
      {hasNext ? (
        <a class="button button-secondary" href={link(page + 1)} rel="next">
          {t.common.paging.next}
        </a>
      ) : null}
    </nav>
  );
};

/** A titled card of a page; its heading names the section for assistive technology. */
export const Card: FC<{ id: string; title: string; class?: string; children?: Child }> = ({
  id,
  title,
  class: extra,
  children,
}) => (
  <section class={extra ? `card ${extra}` : 'card'} aria-labelledby={`${id}-title`}>
    <h2 id={`${id}-title`}>{title}</h2>
    {children}
  </section>
);

/** A label and its value, in a definition list. */
export const Fact: FC<{ label: string; children?: Child }> = ({ label, children }) => (
  <div class="fact">
    <dt>{label}</dt>
    <dd>{children}</dd>
  </div>
);

/** An instant as a fact; with `optional`, no line at all when there is none. */
export const DateFact: FC<{
  label: string;
  iso: string | null | undefined;
  locale: Locale;
  optional?: boolean;
}> = ({ label, iso, locale, optional }) =>
  optional && !iso ? null : (
    <Fact label={label}>
      <DateTime iso={iso} locale={locale} />
    </Fact>
  );

/** A page's title with its introduction; `children` stand at the head's other end. */
export const PageHead: FC<{ title: string; intro: string; children?: Child }> = ({
  title,
  intro,
  children,
}) => (
  <div class="page-head">
    <div>
      <h1>{title}</h1>
      <p class="muted page-intro">{intro}</p>
    </div>
    {children}
  </div>
);

/**
 * A table in its scrolling wrapper (`wrap`: the wrapper's classes), one column header per
 * label; `children` are the body's rows.
 */
export const Table: FC<{ wrap?: string; class: string; labels: string[]; children?: Child }> = ({
  wrap,
  class: classes,
  labels,
  children,
}) => (
  <div class={wrap ?? 'table-wrap'}>
    <table class={classes}>
      <thead>
        <tr>
          {labels.map((label) => (
            <th scope="col">{label}</th>
          ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  </div>
);
