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

/**
 * JWTs are HS256 with a key of their own environment and an audience naming it, so a
 * development token fails in production twice over. `typ` binds a token to its header: an
 * access token in `x-access-token` or a partner token in `Authorization` is no token at all.
 */
export async function issueToken(
  deps: TokenDeps,
  userId: number,
  type: TokenType,
): Promise<string> {
  const issuedAt = Math.floor(deps.clock.now().getTime() / 1000);
  return new SignJWT({ typ: type })
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
  try {
    const { payload } = await jwtVerify(token, deps.secrets.jwtKey(deps.config.environment), {
      algorithms: ['HS256'],
      issuer: deps.config.serviceName,
      audience: audience(deps),
      currentDate: deps.clock.now(),
    });
    if (payload.typ !== expected || !payload.sub || !/^\d+$/.test(payload.sub)) return null;
    return Number(payload.sub);
  } catch {
    return null;
  }
}
