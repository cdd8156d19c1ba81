import type { Messages } from '@esign/shared/messages';
import type { Child, FC } from 'hono/jsx';
import type { ZodError } from 'zod';
import { Notice } from './components';
import type { WebContext } from './context';

/**
 * The pieces of a list page's filter form (dossiers, tasks, contracts) and the handling of
 * its query: one keyword field, one status select, one date range, one pair of actions.
 */

/**
 * A list's date field: the browser's `YYYY-MM-DD` is a calendar day in Vietnam (UTC+7, no
 * daylight saving), from its first to its last millisecond, as the people using the list mean
 * it; a date-time passes as typed.
 */
export function dayBound(value: string | undefined, end: boolean): string | undefined {
  if (value === undefined || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return value;
  return `${value}T${end ? '23:59:59.999' : '00:00:00.000'}+07:00`;
}

/** The from / to dates of a list's query as the instants they mean (see `dayBound`). */
export function dayRange(query: Record<string, string>): { fromDate?: string; toDate?: string } {
  return { fromDate: dayBound(query.fromDate, false), toDate: dayBound(query.toDate, true) };
}

/** A list's query parameters as text, empty ones left out (an empty field means no filter). */
export function listParameters(c: WebContext, names: readonly string[]): Record<string, string> {
  const query = c.req.query();
  const kept: Record<string, string> = {};
  for (const name of names) {
    const value = query[name];
    if (value !== undefined && value.trim() !== '') kept[name] = value.trim();
  }
  return kept;
}

/** The fields a refused filter names, in the page's words. */
export function refusedFields(error: ZodError, labels: Record<string, string>): string[] {
  return [...new Set(error.issues.map((issue) => String(issue.path[0] ?? '')))].map(
    (field) => labels[field] ?? field,
  );
}

/** Why a list's filter was refused: the fields it names, in the page's words. */
export const RefusedFilter: FC<{
  t: Messages;
  error: ZodError;
  texts: { invalidFilter: string; keyword: string; fromDate: string; toDate: string };
  /** The labels of the list's own fields, besides keyword, dates and paging. */
  labels?: Record<string, string>;
}> = ({ t, error, texts, labels }) => (
  <Notice tone="danger">
    {texts.invalidFilter}{' '}
    {refusedFields(error, {
      keyword: texts.keyword,
      fromDate: texts.fromDate,
      toDate: texts.toDate,
      page: t.common.paging.label,
      pageSize: t.common.paging.label,
      ...labels,
    }).join(', ')}
  </Notice>
);

/** The search field of a list, with its hint under it (`<name>-hint`). */
export const KeywordField: FC<{
  label: string;
  hint: string;
  value: string | undefined;
  /** The query parameter; `keyword` unless the list names it otherwise. */
  name?: string;
  /** The field's classes: how it sits in the form's row. */
  class?: string;
}> = ({ name = 'keyword', label, hint, value, class: classes = 'field field-grow' }) => (
  <div class={classes}>
    <label for={name}>{label}</label>
    <input
      id={name}
      name={name}
      type="search"
      value={value ?? ''}
      aria-describedby={`${name}-hint`}
      maxlength={255}
    />
    <span id={`${name}-hint`} class="hint">
      {hint}
    </span>
  </div>
);

/** The status select of a list: "any status" first, then each status in the page's words. */
export function StatusSelect<S extends string>({
  label,
  any,
  statuses,
  labels,
  selected,
}: {
  label: string;
  any: string;
  statuses: readonly S[];
  labels: Record<S, string>;
  selected: string | undefined;
}) {
  return (
    <div class="field field-status">
      <label for="status">{label}</label>
      <select id="status" name="status">
        <option value="">{any}</option>
        {statuses.map((status) => (
          <option value={status} selected={selected === status}>
            {labels[status]}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The from / to dates of a list (`fromDate`, `toDate`), as calendar days. */
export const DateRangeFields: FC<{
  fromLabel: string;
  toLabel: string;
  query: Record<string, string>;
}> = ({ fromLabel, toLabel, query }) => (
  <>
    <div class="field">
      <label for="fromDate">{fromLabel}</label>
      <input id="fromDate" name="fromDate" type="date" value={query.fromDate ?? ''} />
    </div>
    <div class="field">
      <label for="toDate">{toLabel}</label>
      <input id="toDate" name="toDate" type="date" value={query.toDate ?? ''} />
    </div>
  </>
);

/** Search, and clear (a link to the list without filters). */
export const FilterActions: FC<{ t: Messages; clear: string; class?: string }> = ({
  t,
  clear,
  class: classes,
}) => (
  <div class={classes ?? 'filter-actions'}>
    <button type="submit" class="button button-primary">
      {t.common.search.submit}
    </button>
    <a class="button button-secondary" href={clear}>
      {t.common.search.clear}
    </a>
  </div>
);

/** The less used filters, folded away unless one of them is set. */
export const MoreFilters: FC<{ label: string; open: boolean; children?: Child }> = ({
  label,
  open,
  children,
}) => (
  <details class="more-filters" open={open}>
    <summary class="more-toggle">{label}</summary>
    {children}
  </details>
);

/** The filter form of a list; it keeps the page size the viewer chose. */
export const FilterForm: FC<{
  action: string;
  query: Record<string, string>;
  children?: Child;
}> = ({ action, query, children }) => (
  <form method="get" action={action} class="card list-filters">
    {children}
    {query.pageSize ? <input type="hidden" name="pageSize" value={query.pageSize} /> : null}
  </form>
);
