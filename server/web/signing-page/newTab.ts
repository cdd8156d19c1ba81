/**
 * Leaving a frame for a tab of its own (USB-token signing does not work in a frame): the framed
 * page opens its own URL in a new tab and hands that tab the session it holds, since the signing
 * link works only once; when the tab has signed, it tells the framed page, which shows the
 * result too. Messages go only between windows of this page's origin that opened each other.
 */

const askKind = 'esign-signing-page:hand-over?';
const handKind = 'esign-signing-page:hand-over';
const signedKind = 'esign-signing-page:signed';
/** The new tab's window name: only a tab opened so asks its opener for a session. */
const tabName = 'esign-signing-page-hand-over';
/** How long a new tab waits for the framed page's answer (same browser, same origin). */
const HAND_OVER_TIMEOUT_MS = 3000;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null;
}

/** A window of this page's own origin, or null (a cross-origin window's location throws). */
function sameOrigin(candidate: Window | null): Window | null {
  try {
    return candidate && candidate.location.origin === window.location.origin ? candidate : null;
  } catch {
    return null;
  }
}

/**
 * Opens this page in a new tab (with an opener, so that the tab can ask for the session), hands
 * it `session`, and calls `onSigned` with what the tab reports once it has signed. False when
 * the browser opened no tab (a popup blocker).
 */
export function continueInNewTab(session: unknown, onSigned: (result: unknown) => void): boolean {
  const opened = window.open(window.location.href, tabName);
  if (!opened) return false;
  const path = window.location.pathname;
  window.addEventListener('message', (event) => {
    if (event.source !== opened || event.origin !== window.location.origin) return;
    if (!isObject(event.data) || event.data.path !== path) return;
    if (event.data.kind === askKind) {
      opened.postMessage({ kind: handKind, path, session }, window.location.origin);
    } else if (event.data.kind === signedKind) {
      onSigned(event.data.result);
    }
  });
  return true;
}

/** In a tab opened by continueInNewTab: the session the framed page held, else undefined. */
export function handedOverSession(): Promise<unknown> {
  const opener = sameOrigin(window.opener as Window | null);
  if (!opener || window.name !== tabName) return Promise.resolve(undefined);
  // A reload asks no more: the tab keeps the session itself from now on.
  window.name = '';
  const path = window.location.pathname;
  return new Promise((resolve) => {
    const timer = window.setTimeout(() => finish(undefined), HAND_OVER_TIMEOUT_MS);
    function finish(session: unknown) {
      window.clearTimeout(timer);
      window.removeEventListener('message', listen);
      resolve(session);
    }
    function listen(event: MessageEvent) {
      if (event.source !== opener || event.origin !== window.location.origin) return;
      if (isObject(event.data) && event.data.kind === handKind && event.data.path === path) {
        finish(event.data.session);
      }
    }
    window.addEventListener('message', listen);
    opener.postMessage({ kind: askKind, path }, window.location.origin);
  });
}

/** Tells the framed page that opened this tab (if any) that the signature is made. */
export function reportSignedToOpener(result: unknown): void {
  sameOrigin(window.opener as Window | null)?.postMessage(
    { kind: signedKind, path: window.location.pathname, result },
    window.location.origin,
  );
}
