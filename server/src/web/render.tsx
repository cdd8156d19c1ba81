import type { Context } from 'hono';
import type { Child } from 'hono/jsx';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { WebEnv } from './context';
import { Layout, type NavItem } from './layout';

/** What a page tells the frame besides its content. */
export interface PageOptions {
  title: string;
  active?: NavItem;
  scripts?: string[];
  status?: ContentfulStatusCode;
}

/** Answers a whole page: the layout around `content`, in the viewer's language. */
export function renderPage(c: Context<WebEnv>, options: PageOptions, content: Child): Response {
  const url = new URL(c.req.url);
  const page = (
    <Layout
      t={c.get('t')}
      locale={c.get('locale')}
      title={options.title}
      viewer={c.get('viewer')}
      here={`${url.pathname}${url.search}`}
      active={options.active}
      scripts={options.scripts}
      embedOrigins={c.get('frameAncestors')}
    >
      {content}
    </Layout>
  );
  return c.html(`<!doctype html>${page.toString()}`, options.status ?? 200);
}
