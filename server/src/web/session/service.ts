import { toActor } from '../../auth/authenticate';
import { apiKeyIsUsable, findUserById, userStatus } from '../../auth/queries';
import type { Actor, AppDeps, Principal } from '../../context';
import { hashSecret, randomToken } from '../../platform/secrets';
import type { Viewer } from '../context';
import {
  endWebSessionById,
  insertWebSession,
  openWebSessionByHash,
  touchWebSession,
  type WebSessionRow,
} from './queries';

/** A session ends after this long without a request… */
export const idleMinutes = 30;
/** …and this long after it was opened, whatever happens. */
export const absoluteHours = 12;
/** Last-seen is written at most this often, not on every request. */
const touchEverySeconds = 60;

/** How the browser proved who it is. */
export type WebCredential = WebSessionRow['credential'];

function principalOf(credential: WebCredential, actor: Actor): Principal {
  return credential === 'partnerToken'
    ? { kind: 'partnerToken', actor }
    : { kind: 'accessToken', actor };
}

function csrfTokenOf(deps: AppDeps, tokenHash: string): string {
  return Buffer.from(hashSecret(deps.secrets, `web-csrf:${tokenHash}`), 'hex').toString(
    'base64url',
  );
}

/**
 * Opens a session for a user: the cookie's token (shown once, to be set as the cookie) and when
 * the session ends at the latest. `notAfter` caps the session at the token it was made from.
 */
export async function openWebSession(
  deps: AppDeps,
  options: {
    userId: number;
    credential: WebCredential;
    apiKeyId?: number | null;
    notAfter?: Date;
  },
): Promise<{ token: string; expiresAt: Date }> {
  const now = deps.clock.now();
  const cap = new Date(now.getTime() + absoluteHours * 3_600_000);
  const expiresAt = options.notAfter && options.notAfter < cap ? options.notAfter : cap;
  const token = randomToken();
  await insertWebSession(deps.db, {
    token_hash: hashSecret(deps.secrets, token),
    user_id: options.userId,
    credential: options.credential,
    api_key_id: options.apiKeyId ?? null,
    created_at: now.toISOString(),
    last_seen_at: now.toISOString(),
    expires_at: expiresAt.toISOString(),
  });
  return { token, expiresAt };
}

/**
 * The viewer behind a session cookie, or null: the session must be open, not idle for too long,
 * its user active, and a session made from a partner token still backed by a usable API key.
 */
export async function viewerOfSessionToken(deps: AppDeps, token: string): Promise<Viewer | null> {
  const now = deps.clock.now();
  const nowIso = now.toISOString();
  const tokenHash = hashSecret(deps.secrets, token);
  const session = await openWebSessionByHash(deps.db, tokenHash, nowIso);
  if (!session) return null;
  const idleSince = now.getTime() - Date.parse(session.last_seen_at);
  if (idleSince > idleMinutes * 60_000) {
    await endWebSessionById(deps.db, session.id, nowIso);
    return null;
  }
  const user = await findUserById(deps.db, session.user_id);
  const keyUsable =
    session.api_key_id === null || (await apiKeyIsUsable(deps.db, session.api_key_id, nowIso));
  // A token-made session lives as its token would (only a locked user loses it: an outside
  // signer's account may still be waiting for activation); a password session needs an active one.
  const userUsable =
    user !== undefined &&
    user.status !== userStatus.locked &&
    (session.credential !== 'password' || user.status === userStatus.active);
  if (!user || !userUsable || !keyUsable) {
    await endWebSessionById(deps.db, session.id, nowIso);
    return null;
  }
  if (idleSince > touchEverySeconds * 1000) await touchWebSession(deps.db, session.id, nowIso);
  const actor = toActor(user);
  return {
    sessionId: session.id,
    actor,
    principal: principalOf(session.credential, actor),
    csrfToken: csrfTokenOf(deps, tokenHash),
  };
}

export async function endWebSession(deps: AppDeps, viewer: Viewer): Promise<void> {
  await endWebSessionById(deps.db, viewer.sessionId, deps.clock.now().toISOString());
}
