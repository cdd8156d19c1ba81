import type { AppDeps, Principal } from '../context';
import { DomainError, errors, unauthorizedMessages } from '../errors/domainError';
import { verifyPassword } from '../platform/passwords';
import { allPermissions } from '../tenancy/permissionCatalog';
import { resolveTenant } from '../tenancy/resolveTenant';
import { verifyApiKey } from './apiKeys';
import {
  findUserById,
  findUsersByLogin,
  permissionsOfUser,
  type UserRow,
  userMembers,
  userStatus,
  usersByIdentityNumber,
} from './queries';
import { rotateRefreshToken, startRefreshFamily } from './refreshTokens';
import { accessTokenSeconds, issueToken } from './tokens';

export interface SessionTokens {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

/** A known account that may not sign in (locked or deactivated by an administrator). */
export class AccountInactive extends DomainError {
  constructor() {
    super('ACCOUNT_INACTIVE', 'The account is not active');
  }
}

function assertCanSignIn(user: UserRow): void {
  if (user.status !== userStatus.active) {
    throw new AccountInactive();
  }
}

async function openSession(deps: AppDeps, user: UserRow): Promise<SessionTokens> {
  assertCanSignIn(user);
  return {
    accessToken: await issueToken(deps, user.id, 'access'),
    refreshToken: await startRefreshFamily(deps, user.id),
    expiresIn: accessTokenSeconds,
  };
}

/**
 * The active user with this login and password. Unknown user and wrong password give the same
 * 401 after the same work. When a login name is also another user's e-mail, the password decides
 * which of the two it is. A user who is not active gets ACCOUNT_INACTIVE.
 */
export async function userOfPassword(
  deps: AppDeps,
  username: string,
  password: string,
): Promise<UserRow> {
  const candidates = await findUsersByLogin(deps.db, username);
  if (candidates.length === 0) await verifyPassword(password, null);
  for (const user of candidates) {
    if (await verifyPassword(password, user.password_hash)) {
      assertCanSignIn(user);
      return user;
    }
  }
  throw errors.unauthorized('Invalid username or password');
}

export async function login(deps: AppDeps, username: string, password: string) {
  return openSession(deps, await userOfPassword(deps, username, password));
}

export async function refresh(deps: AppDeps, refreshToken: string): Promise<SessionTokens> {
  const { userId, refreshToken: next } = await rotateRefreshToken(deps, refreshToken);
  const user = await findUserById(deps.db, userId);
  if (!user || user.status !== userStatus.active) throw errors.unauthorized();
  return {
    accessToken: await issueToken(deps, user.id, 'access'),
    refreshToken: next,
    expiresIn: accessTokenSeconds,
  };
}

/**
 * Backend exchange of an integration secret (an API key bound to a user) and a citizen id for
 * that person's session. The key's user bounds the search to its tenant; a key bound to a
 * super-administrator searches every tenant, which is why keys belong to tenant admins.
 */
export async function loginServer(deps: AppDeps, secretKey: string, cccd: string) {
  const key = await verifyApiKey(deps, secretKey);
  const owner = key.userId === null ? undefined : await findUserById(deps.db, key.userId);
  if (!owner) throw errors.unauthorized(unauthorizedMessages.keyWithoutUser);
  if (owner.status !== userStatus.active) {
    throw errors.unauthorized(unauthorizedMessages.inactiveServiceAccount);
  }
  const tenantId = owner.is_super_admin ? null : (key.tenantId ?? owner.tenant_id);
  const matches = await usersByIdentityNumber(deps.db, cccd, tenantId);
  if (matches.length === 0) {
    throw new DomainError('USER_NOT_FOUND', 'No user with this citizen id', { field: 'cccd' });
  }
  if (matches.length > 1) {
    throw new DomainError('USER_AMBIGUOUS', 'Several users share this citizen id', {
      field: 'cccd',
    });
  }
  return openSession(deps, matches[0]!);
}

/** The API key a partner token is issued with (partner login authenticates by key only). */
function keyOf(principal: Principal): { keyId?: number } {
  return principal.kind === 'apiKey' ? { keyId: principal.keyId } : {};
}

/** Partner login: a token for an existing member of the key's tenant, without a password. */
export async function partnerLogin(
  deps: AppDeps,
  principal: Principal,
  username: string,
  tenantCode: string | undefined,
) {
  const tenant = await resolveTenant(deps.db, principal, tenantCode);
  // A login name can be another user's e-mail: the member of this tenant is the one meant.
  const candidates = await findUsersByLogin(deps.db, username);
  const user = candidates.find((candidate) => candidate.tenant_id === tenant.id) ?? candidates[0];
  if (user?.is_super_admin) {
    throw new DomainError(
      'SUPER_ADMIN_NOT_ALLOWED',
      'A system administrator cannot get a partner token',
    );
  }
  if (!user || user.tenant_id !== tenant.id) {
    throw new DomainError('USER_NOT_FOUND', `No user ${username} in tenant ${tenant.code}`, {
      field: 'username',
    });
  }
  if (user.status === userStatus.locked) {
    throw new DomainError('ACCOUNT_LOCKED', 'The account is locked');
  }
  const members = await userMembers(deps.db, [user.id]);
  const permissions = await permissionsOfUser(deps.db, user.id);
  return {
    accessToken: await issueToken(deps, user.id, 'partner', keyOf(principal)),
    userInfo: {
      id: user.id,
      username: user.username,
      name: user.name ?? '',
      email: user.email ?? '',
      phone: user.phone ?? '',
      identityNumber: user.identity_number ?? '',
      organizationId: user.type === 'external' ? -1 : (user.organization_id ?? -1),
      status: user.status,
      type: user.type,
      address: user.address,
      avatar: null,
      memberOf: members.get(user.id) ?? [],
      updatedAt: user.updated_at,
      defaultSignature: null,
      imageSignatures: [],
      backgroundSignatures: [],
    },
    permission: permissions.has('*') ? [...allPermissions] : [...permissions].sort(),
  };
}
