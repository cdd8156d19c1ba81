import crypto from 'node:crypto';
import type { AppDeps } from '../context';
import { type Db, inTransaction } from '../db/database';
import { errors } from '../errors/domainError';
import { hashSecret, randomToken } from '../platform/secrets';
import {
  insertRefreshToken,
  markRefreshTokenUsed,
  refreshTokenByHash,
  revokeRefreshFamily,
} from './queries';

export const refreshTokenSeconds = 7 * 24 * 60 * 60;

type Deps = Pick<AppDeps, 'db' | 'secrets' | 'clock'>;

async function issueRefreshToken(deps: Deps, db: Db, userId: number, familyId: string) {
  const token = `rt_${randomToken(32)}`;
  const now = deps.clock.now();
  await insertRefreshToken(db, {
    user_id: userId,
    family_id: familyId,
    token_hash: hashSecret(deps.secrets, token),
    expires_at: new Date(now.getTime() + refreshTokenSeconds * 1000).toISOString(),
    created_at: now.toISOString(),
  });
  return token;
}

/** Starts a new family: one per login. */
export function startRefreshFamily(deps: Deps, userId: number): Promise<string> {
  return issueRefreshToken(deps, deps.db, userId, crypto.randomUUID());
}

/**
 * Spends a refresh token and returns its successor in the same family. A token works once; a
 * second use means it leaked, so the whole family is revoked and the caller must log in again.
 */
export async function rotateRefreshToken(
  deps: Deps,
  presented: string,
): Promise<{ userId: number; refreshToken: string }> {
  const outcome = await inTransaction(deps.db, async (trx) => {
    const now = deps.clock.now().toISOString();
    const row = await refreshTokenByHash(trx, hashSecret(deps.secrets, presented));
    if (!row || row.revoked_at !== null || row.expires_at <= now) return null;
    if (row.used_at !== null) {
      await revokeRefreshFamily(trx, row.family_id, now);
      return null;
    }
    await markRefreshTokenUsed(trx, row.id, now);
    const refreshToken = await issueRefreshToken(deps, trx, row.user_id, row.family_id);
    return { userId: row.user_id, refreshToken };
  });
  if (!outcome) throw errors.unauthorized('Refresh token is invalid, expired or already used');
  return outcome;
}
