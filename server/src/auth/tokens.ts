import { jwtVerify, SignJWT } from 'jose';
import type { AppDeps } from '../context';

export type TokenType = 'access' | 'partner';

export const accessTokenSeconds = 60 * 60;
export const partnerTokenSeconds = 15 * 24 * 60 * 60;

const lifetimes: Record<TokenType, number> = {
  access: accessTokenSeconds,
  partner: partnerTokenSeconds,
};

type TokenDeps = Pick<AppDeps, 'config' | 'clock' | 'secrets'>;

function audience(deps: TokenDeps): string {
  return `${deps.config.serviceName}:${deps.config.environment}`;
}

/** What a valid token says: its user and, for a partner token, the API key it was issued with. */
export interface TokenClaims {
  userId: number;
  keyId: number | null;
  /** When the token stops being valid (its `exp`). */
  expiresAt: Date;
}

/**
 * JWTs are HS256 with a key of their own environment and an audience naming it, so a
 * development token fails in production twice over. `typ` binds a token to its header: an
 * access token in `x-access-token` or a partner token in `Authorization` is no token at all.
 * A partner token names the API key of its partner login (`key`), so that revoking the key
 * revokes its tokens ("mass revocation is done by revoking the API key").
 */
export async function issueToken(
  deps: TokenDeps,
  userId: number,
  type: TokenType,
  options: { keyId?: number } = {},
): Promise<string> {
  const issuedAt = Math.floor(deps.clock.now().getTime() / 1000);
  const claims = options.keyId === undefined ? { typ: type } : { typ: type, key: options.keyId };
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(String(userId))
    .setIssuer(deps.config.serviceName)
    .setAudience(audience(deps))
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + lifetimes[type])
    .sign(deps.secrets.jwtKey(deps.config.environment));
}

/** Returns the user id of a valid token of the expected type, or null. Checks signature and expiry only. */
export async function verifyToken(
  deps: TokenDeps,
  token: string,
  expected: TokenType,
): Promise<number | null> {
  return (await verifyTokenClaims(deps, token, expected))?.userId ?? null;
}

/** The claims of a valid token of the expected type, or null. Checks signature and expiry only. */
export async function verifyTokenClaims(
  deps: TokenDeps,
  token: string,
  expected: TokenType,
): Promise<TokenClaims | null> {
  try {
    const { payload } = await jwtVerify(token, deps.secrets.jwtKey(deps.config.environment), {
      algorithms: ['HS256'],
      issuer: deps.config.serviceName,
      audience: audience(deps),
      currentDate: deps.clock.now(),
    });
    if (payload.typ !== expected || !payload.sub || !/^\d+$/.test(payload.sub)) return null;
    const keyId = payload.key;
    if (keyId !== undefined && !Number.isSafeInteger(keyId)) return null;
    return {
      userId: Number(payload.sub),
      keyId: (keyId as number | undefined) ?? null,
      expiresAt: new Date((payload.exp ?? 0) * 1000),
    };
  } catch {
    return null;
  }
}
