/**
 * The signing page's requests: JSON in and out, same origin only. The page's own POSTs (opening
 * a session) carry the web app's CSRF token when a user is signed in; the session's steps go to
 * the API with the page credential (X-Signing-Token) and no cookie.
 */

/** A refusal as the page needs it: the API's code, and what it says about trying again. */
export class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly triesLeft: number | undefined,
    readonly retryAfter: number | undefined,
  ) {
    super(message);
  }
}

/** The session a page holds: what opening it answered (the page credential among it). */
export interface PageSession {
  sessionId: string;
  pageCredential: string;
  signingMethod: SigningMethod;
  expiresAt: string;
  otpSentAt?: string | null;
  tsaUrl?: string;
  ticket?: string;
}

export type SigningMethod = 'usb_token' | 'cloud_hsm' | 'otp_sms' | 'image_signature';

interface Answer<T> {
  data?: T;
  code?: string;
  message?: string;
  details?: { triesLeft?: number };
}

async function post<T>(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  credentials: RequestCredentials,
): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: JSON.stringify(body),
      credentials,
      cache: 'no-store',
    });
  } catch {
    throw new Refusal(0, 'NETWORK', 'The service cannot be reached', undefined, undefined);
  }
  const answer = (await response.json().catch(() => ({}))) as Answer<T>;
  if (!response.ok || answer.data === undefined) {
    const retry = Number(response.headers.get('retry-after'));
    throw new Refusal(
      response.status,
      answer.code ?? 'HTTP_ERROR',
      answer.message ?? `HTTP ${response.status}`,
      answer.details?.triesLeft,
      Number.isFinite(retry) && retry > 0 ? retry : undefined,
    );
  }
  return answer.data;
}

/** The web app's CSRF token, present when a user is signed in. */
function csrfToken(): string | undefined {
  return document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content;
}

/** A POST to the page itself (opening its session): same-origin cookies, the CSRF token. */
export function postToPage<T>(url: string, body: unknown): Promise<T> {
  const token = csrfToken();
  return post<T>(url, body, token ? { 'x-csrf-token': token } : {}, 'same-origin');
}

/** A step of the session on the API, with the page credential. */
export function postStep<T>(
  apiBase: string,
  session: PageSession,
  step: string,
  body: unknown,
): Promise<T> {
  return post<T>(
    `${apiBase}${encodeURIComponent(session.sessionId)}/${step}`,
    body,
    { 'x-signing-token': session.pageCredential },
    'omit',
  );
}
