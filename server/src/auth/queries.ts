import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../db/database';
import type { ApiKeyKind, ApiKeysTable, RefreshTokensTable, UsersTable } from '../db/schema';
import { unsyncedWrite } from '../db/unsyncedWrite';

export type UserRow = Selectable<UsersTable>;

export const userStatus = { waiting: 1, active: 2, locked: 3, awaitingActivation: 4 } as const;

export function findUserById(db: Db, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Login names and e-mails are compared case-insensitively (Unicode folding, not SQLite's ASCII). */
export function identityKey(value: string): string {
  return value.normalize('NFC').trim().toLowerCase();
}

/**
 * The account a login name or e-mail names. Outside signers (external accounts) of different
 * tenants may share a login name, so a caller that knows the tenant passes it: that tenant's
 * account comes first; otherwise, and among equals, the lowest id.
 */
export function findUserByLogin(
  db: Db,
  login: string,
  preferTenantId?: number,
): Promise<UserRow | undefined> {
  const key = identityKey(login);
  return db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb.or([eb('username_key', '=', key), eb('email_key', '=', key)]))
    .$if(preferTenantId !== undefined, (query) =>
      query.orderBy((eb) =>
        eb.case().when('tenant_id', '=', preferTenantId!).then(0).else(1).end(),
      ),
    )
    .orderBy('id')
    .executeTakeFirst();
}

/**
 * At most two users of a citizen id, in one tenant or (null: a super-administrator's key) in
 * every tenant: enough to tell one from several.
 */
export function usersByIdentityNumber(
  db: Db,
  identityNumber: string,
  tenantId: number | null,
): Promise<UserRow[]> {
  let query = db.selectFrom('users').selectAll().where('identity_number', '=', identityNumber);
  if (tenantId !== null) query = query.where('tenant_id', '=', tenantId);
  return query.limit(2).execute();
}

/** Whether an API key may still be used at `now`: it exists, is not revoked and not expired. */
export async function apiKeyIsUsable(db: Db, keyId: number, now: string): Promise<boolean> {
  const row = await db
    .selectFrom('api_keys')
    .select(['revoked_at', 'expires_at', 'kind'])
    .where('id', '=', keyId)
    .executeTakeFirst();
  return (
    row !== undefined &&
    row.kind !== 'legacy' &&
    row.revoked_at === null &&
    (row.expires_at === null || row.expires_at > now)
  );
}

/**
 * Every user a login name or e-mail names, the login-name matches first. Internal login names and
 * e-mails are unique in the system, but outside signers (external accounts) are per tenant, so
 * one citizen id may name an external account in each tenant it signs for.
 */
export async function findUsersByLogin(db: Db, login: string): Promise<UserRow[]> {
  const key = identityKey(login);
  const rows = await db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb.or([eb('username_key', '=', key), eb('email_key', '=', key)]))
    .orderBy('id')
    .execute();
  return rows.sort((a, b) => Number(b.username_key === key) - Number(a.username_key === key));
}

/** Every permission the user holds in its tenant, through the roles of its memberships. */
export async function permissionsOfUser(db: Db, userId: number): Promise<Set<string>> {
  const rows = await db
    .selectFrom('memberships')
    .innerJoin('role_permissions', 'role_permissions.role_id', 'memberships.role_id')
    .innerJoin('roles', 'roles.id', 'memberships.role_id')
    .select('role_permissions.permission')
    .where('memberships.user_id', '=', userId)
    .where('roles.status', '=', 1)
    .execute();
  return new Set(rows.map((row) => row.permission));
}

export interface Member {
  organizationCode: string | null;
  organizationName: string | null;
  roleCode: string;
  roleName: string;
}

/** Memberships of several users at once, keyed by user id (one query, not one per user). */
export async function userMembers(db: Db, userIds: number[]): Promise<Map<number, Member[]>> {
  const byUser = new Map<number, Member[]>();
  if (userIds.length === 0) return byUser;
  const rows = await db
    .selectFrom('memberships')
    .innerJoin('roles', 'roles.id', 'memberships.role_id')
    .innerJoin('organizations', 'organizations.id', 'memberships.organization_id')
    .select([
      'memberships.user_id as userId',
      'organizations.code as organizationCode',
      'organizations.name as organizationName',
      'organizations.deleted_at as organizationDeletedAt',
      'roles.code as roleCode',
      'roles.name as roleName',
    ])
    .where('memberships.user_id', 'in', userIds)
    .orderBy('memberships.created_at')
    .orderBy('organizations.code')
    .execute();
  for (const row of rows) {
    const deleted = row.organizationDeletedAt !== null;
    const list = byUser.get(row.userId) ?? [];
    list.push({
      organizationCode: deleted ? null : row.organizationCode,
      organizationName: deleted ? null : row.organizationName,
      roleCode: row.roleCode,
      roleName: row.roleName,
    });
    byUser.set(row.userId, list);
  }
  return byUser;
}

export type ApiKeyRow = Selectable<ApiKeysTable>;

export async function insertApiKey(db: Db, values: Insertable<ApiKeysTable>): Promise<number> {
  const row = await db
    .insertInto('api_keys')
    .values(values)
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A current-format key by the public id it carries. */
export function apiKeyByPublicId(db: Db, publicId: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('public_id', '=', publicId).executeTakeFirst();
}

/** A key of the old plaintext kind, found by the keyed hash of the presented text. */
export function legacyApiKeyByHash(db: Db, secretHash: string): Promise<ApiKeyRow | undefined> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('secret_hash', '=', secretHash)
    .where('kind', '=', 'legacy')
    .executeTakeFirst();
}

/** A key of any kind already on record with this hash. */
export function apiKeyIdByHash(db: Db, secretHash: string): Promise<{ id: number } | undefined> {
  return db
    .selectFrom('api_keys')
    .select('id')
    .where('secret_hash', '=', secretHash)
    .executeTakeFirst();
}

export function apiKeyRevocation(
  db: Db,
  id: number,
): Promise<{ id: number; revoked_at: string | null } | undefined> {
  return db
    .selectFrom('api_keys')
    .select(['id', 'revoked_at'])
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function setApiKeyRevoked(db: Db, id: number, revokedAt: string): Promise<void> {
  await db.updateTable('api_keys').set({ revoked_at: revokedAt }).where('id', '=', id).execute();
}

/** What an operator may see of a key: never the key nor its hash. */
export interface ApiKeyListing {
  id: number;
  kind: ApiKeyKind;
  tenantCode: string | null;
  organizationCode: string | null;
  username: string | null;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

/**
 * Keys, oldest first. With a tenant: its keys and the global keys bound to one of its users
 * (those act in that tenant only); `tenantCode` shows the key's tenant, else its user's.
 */
export async function listApiKeys(db: Db, tenantId?: number): Promise<ApiKeyListing[]> {
  let query = db
    .selectFrom('api_keys')
    .leftJoin('users', 'users.id', 'api_keys.user_id')
    .leftJoin('tenants', (join) =>
      join.on((eb) =>
        eb('tenants.id', '=', eb.fn.coalesce('api_keys.tenant_id', 'users.tenant_id')),
      ),
    )
    .leftJoin('organizations', 'organizations.id', 'api_keys.organization_id')
    .select([
      'api_keys.id as id',
      'api_keys.kind as kind',
      'tenants.code as tenantCode',
      'organizations.code as organizationCode',
      'users.username as username',
      'api_keys.created_at as createdAt',
      'api_keys.expires_at as expiresAt',
      'api_keys.revoked_at as revokedAt',
      'api_keys.last_used_at as lastUsedAt',
    ])
    .orderBy('api_keys.id');
  if (tenantId !== undefined) query = query.where('tenants.id', '=', tenantId);
  return query.execute();
}

export type RefreshTokenRow = Selectable<RefreshTokensTable>;

export async function insertRefreshToken(
  db: Db,
  values: Insertable<RefreshTokensTable>,
): Promise<void> {
  await db.insertInto('refresh_tokens').values(values).execute();
}

export function refreshTokenByHash(
  db: Db,
  tokenHash: string,
): Promise<RefreshTokenRow | undefined> {
  return db
    .selectFrom('refresh_tokens')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** Revokes every live token of a family (a reused token means the family leaked). */
export async function revokeRefreshFamily(db: Db, familyId: string, now: string): Promise<void> {
  await db
    .updateTable('refresh_tokens')
    .set({ revoked_at: now })
    .where('family_id', '=', familyId)
    .where('revoked_at', 'is', null)
    .execute();
}

export async function markRefreshTokenUsed(db: Db, id: number, now: string): Promise<void> {
  await db.updateTable('refresh_tokens').set({ used_at: now }).where('id', '=', id).execute();
}

/** Where one request is counted: a rate bucket, its caller and the window it falls in. */
export interface RateWindowKey {
  bucket: string;
  caller: string;
  windowStart: string;
}

/**
 * Counts one request in its window and answers the window's count after it: one atomic statement
 * on either dialect (the row is created at 1 or raised by 1 under the row's lock), so writers on
 * several instances at once never lose a count.
 */
export async function countInRateWindow(db: Db, key: RateWindowKey): Promise<number> {
  const row = await unsyncedWrite(db, (connection) =>
    connection
      .insertInto('rate_windows')
      .values({ bucket: key.bucket, caller: key.caller, window_start: key.windowStart, count: 1 })
      .onConflict((conflict) =>
        conflict
          .columns(['bucket', 'caller', 'window_start'])
          .doUpdateSet((eb) => ({ count: eb('rate_windows.count', '+', 1) })),
      )
      .returning('count')
      .executeTakeFirstOrThrow(),
  );
  return Number(row.count);
}

/** The count of a window so far, 0 when nothing was counted in it. */
export async function rateWindowCount(db: Db, key: RateWindowKey): Promise<number> {
  const row = await db
    .selectFrom('rate_windows')
    .select('count')
    .where('bucket', '=', key.bucket)
    .where('caller', '=', key.caller)
    .where('window_start', '=', key.windowStart)
    .executeTakeFirst();
  return row ? Number(row.count) : 0;
}

/** Forgets the windows that began before `before` (ISO-8601): no limit reads them again. */
export async function deleteRateWindowsBefore(db: Db, before: string): Promise<void> {
  await db.deleteFrom('rate_windows').where('window_start', '<', before).execute();
}
