import crypto from 'node:crypto';
import type { AppDeps } from '../context';
import { type Db, inTransaction } from '../db/database';
import type { ApiKeyKind } from '../db/schema';
import { DomainError, Unauthenticated, unauthorizedMessages } from '../errors/domainError';
import { isoNow } from '../platform/clock';
import {
  constantTimeEqual,
  hashSecret,
  randomToken,
  type ServiceSecrets,
} from '../platform/secrets';
import type { TenantRow } from '../tenancy/resolveTenant';
import { organizationByCode } from '../tenancy/service';
import {
  type ApiKeyRow,
  apiKeyByPublicId,
  apiKeyIdByHash,
  apiKeyRevocation,
  findUserByLogin,
  insertApiKey,
  legacyApiKeyByHash,
  setApiKeyRevoked,
  type UserRow,
} from './queries';

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
  const id = await insertApiKey(db, {
    public_id: publicId,
    kind: key.kind,
    tenant_id: key.tenantId,
    organization_id: key.organizationId,
    user_id: key.userId,
    secret_hash: hashSecret(secrets, plaintext),
    expires_at: key.expiresAt,
    created_at: now,
  });
  return { id, key: plaintext };
}

/** Records an old plaintext key (by hash only) so that its use is answered with the legacy error. */
export async function importLegacyKey(
  db: Db,
  secrets: ServiceSecrets,
  now: string,
  key: { tenantId: number; organizationId: number; userId: number; plaintext: string },
): Promise<number> {
  return insertApiKey(db, {
    public_id: `legacy_${newPublicId()}`,
    kind: 'legacy',
    tenant_id: key.tenantId,
    organization_id: key.organizationId,
    user_id: key.userId,
    secret_hash: hashSecret(secrets, key.plaintext),
    expires_at: null,
    created_at: now,
  });
}

export interface VerifiedKey {
  id: number;
  kind: Exclude<ApiKeyKind, 'legacy'>;
  tenantId: number | null;
  organizationId: number | null;
  userId: number | null;
}

const invalidKey = () => new Unauthenticated(unauthorizedMessages.invalidKey);

/**
 * The row a presented key names when its secret matches, kept in `deps.credentials` under the
 * keyed hash of the whole key (so the cache holds no key, and a hit is the same secret).
 */
function matchingKeyRow(
  deps: Pick<AppDeps, 'db' | 'credentials'>,
  presented: string,
  presentedHash: string,
): Promise<ApiKeyRow | undefined> {
  return deps.credentials.get(`key:${presentedHash}`, async () => {
    const match = keyPattern.exec(presented);
    const row = match
      ? await apiKeyByPublicId(deps.db, match[1]!)
      : await legacyApiKeyByHash(deps.db, presentedHash);
    return row && constantTimeEqual(row.secret_hash, presentedHash) ? row : undefined;
  });
}

/**
 * Checks a presented key: wrong, unknown, malformed, revoked and expired keys all give the same
 * 401; a key of the old plaintext kind gives API_KEY_LEGACY_NOT_SUPPORTED. Revocation and expiry
 * are judged at every call, also when the row was kept.
 */
export async function verifyApiKey(
  deps: Pick<AppDeps, 'db' | 'secrets' | 'clock' | 'credentials'>,
  presented: string,
): Promise<VerifiedKey> {
  const row = await matchingKeyRow(deps, presented, hashSecret(deps.secrets, presented));
  if (!row) throw invalidKey();
  if (row.kind === 'legacy') {
    throw new Unauthenticated(
      'API key dạng cũ không còn được hỗ trợ; hãy xin cấp khóa mới',
      'API_KEY_LEGACY_NOT_SUPPORTED',
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

// ---------------------------------------------------------------------------------------------
// Operator side: issuing keys bound to the right account, listing and revoking them.

const isoInstant =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/**
 * An expiry instant given by an operator: ISO 8601, a date (midnight UTC) or a date-time with
 * `Z` or an offset, strictly after `now`. Returned normalised to UTC.
 */
export function keyExpiry(raw: string, now: Date): string {
  const match = isoInstant.exec(raw.trim());
  const [, year, month, day, hour] = match ?? [];
  const calendarDay = match
    ? new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)))
    : null;
  const parsed = new Date(raw.trim());
  const valid =
    calendarDay !== null &&
    calendarDay.getUTCMonth() === Number(month) - 1 &&
    calendarDay.getUTCDate() === Number(day) &&
    (hour === undefined || Number(hour) < 24) &&
    !Number.isNaN(parsed.getTime());
  if (!valid) {
    throw new DomainError(
      'VALIDATION_ERROR',
      `expires must be an ISO 8601 date or date-time with Z or an offset, got "${raw}"`,
      { field: 'expires' },
    );
  }
  if (parsed.getTime() <= now.getTime()) {
    throw new DomainError('VALIDATION_ERROR', `expires ${raw} is not in the future`, {
      field: 'expires',
    });
  }
  return parsed.toISOString();
}

/**
 * The account a tenant key acts for: a user of that tenant found by login name or e-mail. Rule 7
 * of the spec: keys must be bound to a tenant administrator, never to a system
 * super-administrator (such a key would act system-wide).
 */
export async function tenantKeyOwner(db: Db, tenant: TenantRow, login: string): Promise<UserRow> {
  const user = await findUserByLogin(db, login, tenant.id);
  if (user?.is_super_admin) {
    throw new DomainError(
      'API_KEY_SUPER_ADMIN_NOT_ALLOWED',
      `${user.username} is a system super-administrator; a key of tenant ${tenant.code} must be bound to a tenant administrator`,
      { field: 'user' },
    );
  }
  if (!user || user.tenant_id !== tenant.id) {
    throw new DomainError('USER_NOT_FOUND', `No user ${login} in tenant ${tenant.code}`, {
      field: 'user',
    });
  }
  return user;
}

export interface IssuedBoundKey extends IssuedKey {
  /** The account the key acts for; null for an unbound global key. */
  owner: UserRow | null;
}

/** An organization key of `organizationCode`, bound to a user of the tenant (see tenantKeyOwner). */
export function issueOrganizationKey(
  deps: Pick<AppDeps, 'db' | 'secrets' | 'clock'>,
  tenant: TenantRow,
  request: { organizationCode: string; login: string; expiresAt: string | null },
): Promise<IssuedBoundKey> {
  return inTransaction(deps.db, async (trx) => {
    const organization = await organizationByCode(trx, tenant.id, request.organizationCode);
    const owner = await tenantKeyOwner(trx, tenant, request.login);
    const issued = await createApiKey(trx, deps.secrets, isoNow(deps.clock), {
      kind: 'organization',
      tenantId: tenant.id,
      organizationId: organization.id,
      userId: owner.id,
      expiresAt: request.expiresAt,
    });
    return { ...issued, owner };
  });
}

/**
 * A global key: unbound (directory and partner login only), or bound to any account found by
 * login name or e-mail. Binding it to a super-administrator is allowed; the caller should warn.
 */
export function issueGlobalKey(
  deps: Pick<AppDeps, 'db' | 'secrets' | 'clock'>,
  request: { login: string | null; expiresAt: string | null },
): Promise<IssuedBoundKey> {
  return inTransaction(deps.db, async (trx) => {
    const owner = request.login === null ? null : await findUserByLogin(trx, request.login);
    if (owner === undefined) {
      throw new DomainError('USER_NOT_FOUND', `No user ${request.login}`, { field: 'user' });
    }
    const issued = await createApiKey(trx, deps.secrets, isoNow(deps.clock), {
      kind: 'global',
      tenantId: null,
      organizationId: null,
      userId: owner?.id ?? null,
      expiresAt: request.expiresAt,
    });
    return { ...issued, owner };
  });
}

/**
 * Records an old plaintext key of `organizationCode` (by hash only) so that its use is answered
 * with API_KEY_LEGACY_NOT_SUPPORTED. A key already on record is refused.
 */
export function importLegacyKeyOf(
  deps: Pick<AppDeps, 'db' | 'secrets' | 'clock'>,
  tenant: TenantRow,
  request: { organizationCode: string; login: string; plaintext: string },
): Promise<number> {
  if (keyPattern.test(request.plaintext)) {
    throw new DomainError(
      'VALIDATION_ERROR',
      'This is a current-format key, not a legacy one; it cannot be imported',
      { field: 'key' },
    );
  }
  return inTransaction(deps.db, async (trx) => {
    const organization = await organizationByCode(trx, tenant.id, request.organizationCode);
    const owner = await tenantKeyOwner(trx, tenant, request.login);
    const known = await apiKeyIdByHash(trx, hashSecret(deps.secrets, request.plaintext));
    if (known) {
      throw new DomainError(
        'API_KEY_ALREADY_EXISTS',
        `This key is already on record (id ${known.id})`,
        {
          field: 'key',
        },
      );
    }
    return importLegacyKey(trx, deps.secrets, isoNow(deps.clock), {
      tenantId: tenant.id,
      organizationId: organization.id,
      userId: owner.id,
      plaintext: request.plaintext,
    });
  });
}

/** Revokes a key (idempotent: a revoked key keeps its first revocation time). */
export function revokeApiKey(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  id: number,
): Promise<{ id: number; revokedAt: string; alreadyRevoked: boolean }> {
  return inTransaction(deps.db, async (trx) => {
    const row = await apiKeyRevocation(trx, id);
    if (!row) throw new DomainError('API_KEY_NOT_FOUND', `No API key with id ${id}`);
    if (row.revoked_at !== null) return { id, revokedAt: row.revoked_at, alreadyRevoked: true };
    const revokedAt = isoNow(deps.clock);
    await setApiKeyRevoked(trx, id, revokedAt);
    return { id, revokedAt, alreadyRevoked: false };
  });
}
