import type { Locale, Messages } from '@esign/shared/messages';
import type { Context } from 'hono';
import type { Actor, AppEnv, Principal } from '../context';

/** The signed-in person of a request, as the domain services see them. */
export interface Viewer {
  sessionId: number;
  actor: Actor;
  /** What the domain's access rules see: the kind of credential the session was opened with. */
  principal: Principal;
  /** The secret the page's forms carry back (CSRF), derived from the session's token. */
  csrfToken: string;
}

/** What a page's handler reads besides the app's own variables. */
export interface WebEnv {
  Variables: AppEnv['Variables'] & {
    /** The signed-in person, or null on the pages anyone may open. */
    viewer: Viewer | null;
    locale: Locale;
    t: Messages;
    /** Origins allowed to frame the answer (`frame-ancestors`); none unless a page sets them. */
    frameAncestors: string[];
    /** Loopback origins the signing page may reach (the desktop agent); none elsewhere. */
    extraConnectSources: string[];
  };
}

/**
 * The same request as the API's middleware sees it: a page's context has every variable of
 * theirs and more, which Hono's invariant Context type cannot say by itself.
 */
export function asAppContext(c: Context<WebEnv>): Context<AppEnv> {
  return c as unknown as Context<AppEnv>;
}

/** A page handler's context, whatever its route. */
export type WebContext = Context<WebEnv>;
