import { recordIssuedSecret } from '../../../test/support/runLog';
import type { Harness } from './harness';

/** What a form posted from one of our pages carries besides its fields. */
export const sameOriginForm = {
  'content-type': 'application/x-www-form-urlencoded',
  'sec-fetch-site': 'same-origin',
};

/** The session cookie a response sets, as a Cookie header value (noted among issued secrets). */
export function sessionCookieOf(response: Response): string {
  const set = response.headers.get('set-cookie') ?? '';
  const match = /((?:__Host-)?esign_session=[^;]+)/.exec(set);
  if (!match) throw new Error(`no session cookie in ${set}`);
  recordIssuedSecret(match[1]!.split('=')[1]!, 'web session cookie');
  return match[1]!;
}

/** Signs in through the web app's form; answers the Cookie header of the new session. */
export async function webSignIn(h: Harness, username: string, password: string): Promise<string> {
  const response = await h.request('POST', '/app/dang-nhap', {
    headers: sameOriginForm,
    body: new URLSearchParams({ username, password }).toString(),
  });
  if (response.status !== 303) throw new Error(`sign-in answered ${response.status}`);
  return sessionCookieOf(response);
}

/** The CSRF token a page's forms carry. */
export function csrfOf(html: string): string {
  const match = /name="csrf-token" content="([^"]+)"/.exec(html);
  if (!match) throw new Error('no CSRF token on the page');
  return match[1]!;
}

/** Posts a form of a page as the browser would: same origin, the session's cookie and token. */
export async function postForm(
  h: Harness,
  cookie: string,
  path: string,
  fields: Record<string, string>,
): Promise<Response> {
  const page = await h.request('GET', '/app/dashboard', { headers: { cookie } });
  const csrf = csrfOf(await page.text());
  return h.request('POST', path, {
    headers: { ...sameOriginForm, cookie },
    body: new URLSearchParams({ ...fields, _csrf: csrf }).toString(),
  });
}
