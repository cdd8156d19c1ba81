import { recordIssuedSecret } from '../../../test/support/runLog';
import { openWebSession } from '../../src/web/session/service';
import type { Harness } from '../support/harness';
import { csrfOf, sameOriginForm } from '../support/web';

/**
 * Helpers of the dossier and task page tests: a session for any user of a fixture world (the
 * workflow world's people have no password), pages read as text, and forms posted as the
 * page's own.
 */

/** The Cookie header of a fresh web session of `userId` (noted among issued secrets). */
export async function cookieFor(h: Harness, userId: number): Promise<string> {
  const { token } = await openWebSession(h.deps, { userId, credential: 'password' });
  recordIssuedSecret(token, 'web session cookie');
  return `esign_session=${token}`;
}

/** A page as the browser gets it: status, location, and the HTML. */
export async function getPage(
  h: Harness,
  cookie: string,
  path: string,
): Promise<{ status: number; location: string | null; html: string; type: string }> {
  const response = await h.request('GET', path, { headers: { cookie } });
  return {
    status: response.status,
    location: response.headers.get('location'),
    type: response.headers.get('content-type') ?? '',
    html: await response.text(),
  };
}

/** Text a person reads: tags dropped, entities of our escaping undone, spaces collapsed. */
export function textOf(html: string): string {
  return html
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The text of each body row of the table with this class. */
export function rowsOf(html: string, tableClass: string): string[] {
  const table = new RegExp(
    `<table class="[^"]*\\b${tableClass}\\b[^"]*">([\\s\\S]*?)</table>`,
  ).exec(html);
  if (!table) return [];
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(table[1]!)?.[1] ?? '';
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) => textOf(row[1]!));
}

/** The main content of a page (between <main> and </main>), as text. */
export function mainText(html: string): string {
  return textOf(/<main[^>]*>([\s\S]*?)<\/main>/.exec(html)?.[1] ?? '');
}

/** Posts a form of one of our pages: same origin, the session's cookie and its CSRF token. */
export async function postPageForm(
  h: Harness,
  cookie: string,
  path: string,
  fields: Record<string, string>,
  options: { csrf?: string; site?: string } = {},
): Promise<Response> {
  const csrf = options.csrf ?? csrfOf((await getPage(h, cookie, '/app/xu-ly-cong-viec')).html);
  return h.request('POST', path, {
    headers: {
      ...sameOriginForm,
      ...(options.site ? { 'sec-fetch-site': options.site } : {}),
      cookie,
    },
    body: new URLSearchParams({ ...fields, _csrf: csrf }).toString(),
  });
}
