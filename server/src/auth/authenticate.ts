import type { Context, MiddlewareHandler } from 'hono';
import type { Actor, AppDeps, AppEnv, CredentialKind, Principal } from '../context';
import { DomainError, errors, Unauthenticated, unauthorizedMessages } from '../errors/domainError';
import { verifyApiKey } from './apiKeys';
import { apiKeyIsUsable, findUserById, type UserRow, userStatus } from './queries';
import { guardCredentialCheck } from './rateLimit';
import { type TokenClaims, type TokenType, verifyTokenClaims } from './tokens';

export interface AuthenticateOptions {
  /** Credentials this area accepts, per the spec's table. */
  accepts: CredentialKind[];
  /** Whether a global key is accepted here; otherwise it gets "API key chưa gắn người dùng". */
  globalKeys?: boolean;
  /**
   * Tokens are recognised here only to be refused with 403 (the webhook test: "403 with an
   * access token"); a token that is not valid still gets 401.
   */
  refusesTokens?: boolean;
}

export function toActor(user: UserRow): Actor {
  return {
    id: user.id,
    tenantId: user.tenant_id,
    username: user.username,
    isSuperAdmin: user.is_super_admin === 1,
  };
}

/** A user by id, kept between requests in `deps.credentials` (see credentialCache.ts). */
export function userById(
  deps: Pick<AppDeps, 'db' | 'credentials'>,
  id: number,
): Promise<UserRow | undefined> {
  return deps.credentials.get(`user:${id}`, () => findUserById(deps.db, id));
}

/** The API key header, case-insensitive by HTTP; the former `apikey` header is never read. */
export function presentedApiKey(c: Context): string | undefined {
  return c.req.header('x-api-key') || undefined;
}

async function principalFromApiKey(
  deps: AppDeps,
  presented: string,
  globalKeys: boolean,
): Promise<Principal> {
  const key = await verifyApiKey(deps, presented);
  if (key.kind === 'organization' && key.userId === null) {
    throw errors.unauthorized(unauthorizedMessages.keyWithoutUser);
  }
  if (key.kind === 'global' && !globalKeys) {
    throw errors.unauthorized(unauthorizedMessages.keyWithoutUser);
  }
  let actor: Actor | null = null;
  if (key.userId !== null) {
    const user = await userById(deps, key.userId);
    if (!user || user.status !== userStatus.active) {
      throw errors.unauthorized(unauthorizedMessages.inactiveServiceAccount);
    }
    actor = toActor(user);
  }
  return {
    kind: 'apiKey',
    keyId: key.id,
    keyKind: key.kind,
    tenantId: key.tenantId,
    organizationId: key.organizationId,
    actor,
  };
}

/** The user of a valid token, the API key a partner token was issued with, and its expiry. */
export interface TokenHolder {
  actor: Actor;
  keyId: number | null;
  expiresAt: Date;
}

/**
 * The user of a valid token. Beyond signature and expiry, a locked or removed user has no
 * session, and a partner token dies with the API key it was issued with (mass revocation).
 */
async function holderOfToken(deps: AppDeps, token: string, type: TokenType): Promise<TokenHolder> {
  return holderOfClaims(deps, await verifyTokenClaims(deps, token, type));
}

/** The holder of a token whose signature and expiry were checked (null: none were valid). */
async function holderOfClaims(deps: AppDeps, claims: TokenClaims | null): Promise<TokenHolder> {
  if (claims === null) throw errors.unauthorized();
  if (claims.keyId !== null) {
    const usable = await apiKeyIsUsable(deps.db, claims.keyId, deps.clock.now().toISOString());
    if (!usable) throw errors.unauthorized();
  }
  const user = await userById(deps, claims.userId);
  if (!user || user.status === userStatus.locked) throw errors.unauthorized();
  return { actor: toActor(user), keyId: claims.keyId, expiresAt: claims.expiresAt };
}

async function actorFromToken(deps: AppDeps, token: string, type: TokenType): Promise<Actor> {
  return (await holderOfToken(deps, token, type)).actor;
}

/**
 * A token handed to the web application (`?at=`): a user's access token or a partner token,
 * whichever it is (its signature checked once). Throws UNAUTHORIZED for anything else.
 */
export async function holderOfAnyToken(
  deps: AppDeps,
  token: string,
): Promise<TokenHolder & { kind: 'accessToken' | 'partnerToken' }> {
  const access = await verifyTokenClaims(deps, token, 'access');
  const claims = access ?? (await verifyTokenClaims(deps, token, 'partner'));
  const holder = await holderOfClaims(deps, claims);
  return { ...holder, kind: access ? 'accessToken' : 'partnerToken' };
}

function bearerToken(c: Context): string | undefined {
  // The scheme name is case-insensitive (RFC 9110 section 11.1).
  const match = /^Bearer ([^\s]+)$/i.exec(c.req.header('authorization') ?? '');
  return match?.[1];
}

function partnerToken(c: Context): string | undefined {
  const raw = c.req.header('x-access-token');
  // A `Bearer` prefix in this header makes the token absent, not merely malformed.
  if (!raw || /^bearer\s/i.test(raw)) return undefined;
  return raw;
}

/** The credential of the request that the area reads, in the spec's order; key before token. */
function presentedCredential(c: Context, options: AuthenticateOptions) {
  const { accepts } = options;
  const apiKey = accepts.includes('apiKey') ? presentedApiKey(c) : undefined;
  if (apiKey !== undefined) return { kind: 'apiKey', value: apiKey } as const;
  const readsAccess = accepts.includes('accessToken') || options.refusesTokens;
  const bearer = readsAccess ? bearerToken(c) : undefined;
  if (bearer !== undefined) return { kind: 'accessToken', value: bearer } as const;
  const readsPartner = accepts.includes('partnerToken') || options.refusesTokens;
  const partner = readsPartner ? partnerToken(c) : undefined;
  if (partner !== undefined) return { kind: 'partnerToken', value: partner } as const;
  return undefined;
}

async function resolvePrincipal(
  c: Context<AppEnv>,
  options: AuthenticateOptions,
): Promise<Principal> {
  const deps = c.get('deps');
  const credential = presentedCredential(c, options);
  if (!credential) throw errors.unauthorized();
  const principal: Principal = await guardCredentialCheck(c, async () => {
    if (credential.kind === 'apiKey') {
      return principalFromApiKey(deps, credential.value, options.globalKeys ?? false);
    }
    const type = credential.kind === 'accessToken' ? 'access' : 'partner';
    return { kind: credential.kind, actor: await actorFromToken(deps, credential.value, type) };
  });
  if (principal.kind !== 'apiKey' && !options.accepts.includes(principal.kind)) {
    throw new DomainError('FORBIDDEN', 'Forbidden: this endpoint needs an organization API key');
  }
  return principal;
}

/**
 * Sets `principal` from the first credential the area accepts, in the spec's order: an API key
 * wins over a token, and a token in a header the area does not read counts as absent. Failed
 * checks of a presented credential count against the client address (see guardCredentialCheck).
 */
export function authenticate(options: AuthenticateOptions): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set('principal', await resolvePrincipal(c, options));
    await next();
  };
}

export function requireActor(principal: Principal): Actor {
  if (!principal.actor) throw new Unauthenticated(unauthorizedMessages.keyWithoutUser);
  return principal.actor;
}
