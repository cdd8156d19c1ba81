import crypto from 'node:crypto';
import type { AppDeps } from '../context';
import type { Db } from '../db/database';
import type { ApiKeyKind } from '../db/schema';
import { ApiError, unauthorizedMessages } from '../http/errors';
import {
  constantTimeEqual,
  hashSecret,
  randomToken,
  type ServiceSecrets,
} from '../platform/secrets';

/**
 * Key format: `esk_<publicId>_<secret>`. The public id finds the row; the secret is compared
 * by keyed hash in constant time. Only the hash is stored, so a key is shown once.
 */
const keyPattern = /^esk_([a-z0-9]{16})_([A-Za-z0-9_-]{43})$/;

export interface IssuedKey {
  id: number;
  key: string;
}

export interface NewKey {
  kind: Exclude<ApiKeyKind, 'legacy'>;
  tenantId: number | null;
  organizationId: number | null;
  userId: number | null;
  expiresAt: string | null;
}

function newPublicId(): string {
  return crypto.randomBytes(10).toString('hex').slice(0, 16);
}

export async function createApiKey(
  db: Db,
  secrets: ServiceSecrets,
  now: string,
  key: NewKey,
): Promise<IssuedKey> {
  const publicId = newPublicId();
  const plaintext = `esk_${publicId}_${randomToken(32)}`;
  const row = await db
    .insertInto('api_keys')
    .values({
      public_id: publicId,
      kind: key.kind,
      tenant_id: key.tenantId,
      organization_id: key.organizationId,
      user_id: key.userId,
      secret_hash: hashSecret(secrets, plaintext),
      expires_at: key.expiresAt,
      created_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: row.id, key: plaintext };
}

/** Records an old plaintext key (by hash only) so that its use is answered with the legacy error. */
export async function importLegacyKey(
  db: Db,
  secrets: ServiceSecrets,
  now: string,
  key: { tenantId: number; organizationId: number; userId: number; plaintext: string },
): Promise<number> {
  const row = await db
    .insertInto('api_keys')
    .values({
      public_id: `legacy_${newPublicId()}`,
      kind: 'legacy',
      tenant_id: key.tenantId,
      organization_id: key.organizationId,
      user_id: key.userId,
      secret_hash: hashSecret(secrets, key.plaintext),
      expires_at: null,
      created_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export interface VerifiedKey {
  id: number;
  kind: Exclude<ApiKeyKind, 'legacy'>;
  tenantId: number | null;
  organizationId: number | null;
  userId: number | null;
}

const invalidKey = () => new ApiError(401, 'UNAUTHORIZED', unauthorizedMessages.invalidKey);

/**
 * Checks a presented key: wrong, unknown, malformed, revoked and expired keys all give the same
 * 401; a key of the old plaintext kind gives API_KEY_LEGACY_NOT_SUPPORTED.
 */
export async function verifyApiKey(
  deps: Pick<AppDeps, 'db' | 'secrets' | 'clock'>,
  presented: string,
): Promise<VerifiedKey> {
  const presentedHash = hashSecret(deps.secrets, presented);
  const match = keyPattern.exec(presented);
  const row = match
    ? await deps.db
        .selectFrom('api_keys')
        .selectAll()
        .where('public_id', '=', match[1]!)
        .executeTakeFirst()
    : await deps.db
        .selectFrom('api_keys')
        .selectAll()
        .where('secret_hash', '=', presentedHash)
        .where('kind', '=', 'legacy')
        .executeTakeFirst();
  if (!row || !constantTimeEqual(row.secret_hash, presentedHash)) throw invalidKey();
  if (row.kind === 'legacy') {
    throw new ApiError(
      401,
      'API_KEY_LEGACY_NOT_SUPPORTED',
      'API key dạng cũ không còn được hỗ trợ; hãy xin cấp khóa mới',
    );
  }
  const now = deps.clock.now().toISOString();
  if (row.revoked_at !== null || (row.expires_at !== null && row.expires_at <= now)) {
    throw invalidKey();
  }
  return {
    id: row.id,
    kind: row.kind,
    tenantId: row.tenant_id,
    organizationId: row.organization_id,
    userId: row.user_id,
  };
}
