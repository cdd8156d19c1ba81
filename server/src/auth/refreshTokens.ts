import crypto from 'node:crypto';
import type { AppDeps } from '../context';
import { type Db, inTransaction } from '../db/database';
import { errors } from '../errors/apiError';
import { hashSecret, randomToken } from '../platform/secrets';

export const refreshTokenSeconds = 7 * 24 * 60 * 60;

type Deps = Pick<AppDeps, 'db' | 'secrets' | 'clock'>;

async function insertRefreshToken(deps: Deps, db: Db, userId: number, familyId: string) {
  const token = `rt_${randomToken(32)}`;
  const now = deps.clock.now();
  await db
    .insertInto('refresh_tokens')
    .values({
      user_id: userId,
      family_id: familyId,
      token_hash: hashSecret(deps.secrets, token),
      expires_at: new Date(now.getTime() + refreshTokenSeconds * 1000).toISOString(),
      created_at: now.toISOString(),
    })
    .execute();
  return token;
}

/** Starts a new family: one per login. */
export function startRefreshFamily(deps: Deps, userId: number): Promise<string> {
  return insertRefreshToken(deps, deps.db, userId, crypto.randomUUID());
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
    const row = await trx
      .selectFrom('refresh_tokens')
      .selectAll()
      .where('token_hash', '=', hashSecret(deps.secrets, presented))
      .executeTakeFirst();
    if (!row || row.revoked_at !== null || row.expires_at <= now) return null;
    if (row.used_at !== null) {
      await trx
        .updateTable('refresh_tokens')
        .set({ revoked_at: now })
        .where('family_id', '=', row.family_id)
        .where('revoked_at', 'is', null)
        .execute();
      return null;
    }
    await trx
      .updateTable('refresh_tokens')
      .set({ used_at: now })
      .where('id', '=', row.id)
      .execute();
    const refreshToken = await insertRefreshToken(deps, trx, row.user_id, row.family_id);
    return { userId: row.user_id, refreshToken };
  });
  if (!outcome) throw errors.unauthorized('Refresh token is invalid, expired or already used');
  return outcome;
}
