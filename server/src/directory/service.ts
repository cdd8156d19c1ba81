import type { Updateable } from 'kysely';
import type { z } from 'zod';
import { identityKey, userMembers, userStatus } from '../auth/queries';
import type { AppDeps } from '../context';
import { type Db, inTransaction } from '../db/database';
import type { UsersTable, UserType } from '../db/schema';
import { DomainError, validationError } from '../errors/domainError';
import { isoNow } from '../platform/clock';
import type { TenantRow } from '../tenancy/resolveTenant';
import { resolveMembers, sameMembers } from './members';
import {
  findUserRow,
  insertUserRow,
  membershipsOf,
  rootOrganizations,
  updateUserRow,
  usersWithCode,
} from './queries/users';
import {
  type BulkResult,
  type BulkRowResult,
  type MemberInput,
  UserInputSchema,
  type UserPatch,
  UserRowSchema,
  type UserView,
} from './schemas';
import { assertIdentityFree, replaceMemberships, toUserRow, type UserRow } from './userRecords';

export type { MemberInput, UserView };

/** A user as the personnel system (or the operator CLI) describes it. */
export interface UserInput {
  code?: string;
  email: string;
  username?: string;
  name?: string | null;
  phone?: string | null;
  identityNumber?: string | null;
  taxCode?: string | null;
  address?: string | null;
  gender?: string | null;
  members?: MemberInput[];
}

/** What the operator CLI may set beyond the API's rule 3 (internal, tenant root, waiting). */
export interface CreateUserOptions {
  type?: UserType;
  status?: number;
  passwordHash?: string | null;
  /** Organization the account sits in; the tenant root when absent. */
  organizationId?: number | null;
}

type ValidUserInput = z.output<typeof UserInputSchema>;

/** Profile fields of the API and their columns; an update writes only those present. */
const profileColumns = {
  name: 'name',
  phone: 'phone',
  identityNumber: 'identity_number',
  taxCode: 'tax_code',
  address: 'address',
  gender: 'gender',
} as const satisfies Record<string, keyof UsersTable>;

type ProfileField = keyof typeof profileColumns;

function parsed<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const result = schema.safeParse(input);
  if (!result.success) throw validationError(result.error);
  return result.data;
}

/** An empty profile value is stored as null, like an absent one. */
function blankToNull(value: string | null | undefined): string | null {
  return value ? value : null;
}

export async function toViews(db: Db, rows: UserRow[]): Promise<UserView[]> {
  const members = await userMembers(
    db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => ({
    code: row.code,
    username: row.username,
    name: row.name,
    email: row.email,
    phone: row.phone,
    identityNumber: row.identity_number,
    taxCode: row.tax_code,
    address: row.address,
    gender: row.gender,
    status: row.status,
    type: row.type,
    members: members.get(row.id) ?? [],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }));
}

async function viewOf(db: Db, userId: number): Promise<UserView> {
  const [view] = await toViews(db, [await findUserRow(db, userId)]);
  return view!;
}

/** The tenant's user holding `code`, if any; legacy data holding it twice is refused. */
async function findUserByCode(
  db: Db,
  tenant: TenantRow,
  code: string,
): Promise<UserRow | undefined> {
  const matches = await usersWithCode(db, tenant.id, code);
  if (matches.length > 1) {
    throw new DomainError('USER_CODE_AMBIGUOUS', `User code ${code} is shared by several users`, {
      field: 'code',
    });
  }
  return matches[0];
}

async function userByCode(db: Db, tenant: TenantRow, code: string): Promise<UserRow> {
  const user = await findUserByCode(db, tenant, code);
  if (!user) {
    throw new DomainError('USER_CODE_NOT_FOUND', `No user with code ${code} in the tenant`, {
      field: 'code',
    });
  }
  return user;
}

async function rootOrganizationId(db: Db, tenant: TenantRow): Promise<number> {
  const roots = await rootOrganizations(db, tenant.id);
  const root = roots.find((organization) => organization.code === tenant.code) ?? roots[0];
  if (!root) {
    throw new DomainError('ORGANIZATION_CODE_NOT_FOUND', `Tenant ${tenant.code} has no root`);
  }
  return root.id;
}

/** Rule 3: inserts the user and its memberships. Call inside a transaction. */
async function insertDirectoryUser(
  trx: Db,
  tenant: TenantRow,
  input: ValidUserInput,
  options: CreateUserOptions,
  now: string,
): Promise<number> {
  const username = input.username ?? input.email;
  const identity = { tenantId: tenant.id, code: input.code ?? null, username, email: input.email };
  await assertIdentityFree(trx, identity);
  const members = await resolveMembers(trx, tenant.id, input.members ?? []);
  const organizationId =
    options.organizationId !== undefined
      ? options.organizationId
      : await rootOrganizationId(trx, tenant);
  const profile = Object.fromEntries(
    Object.keys(profileColumns).map((field) => [field, blankToNull(input[field as ProfileField])]),
  );
  const row = await insertUserRow(
    trx,
    toUserRow(
      {
        ...identity,
        ...profile,
        organizationId,
        status: options.status ?? userStatus.waiting,
        type: options.type ?? 'internal',
        passwordHash: options.passwordHash ?? null,
      },
      now,
    ),
  );
  await replaceMemberships(trx, row.id, members, now);
  return row.id;
}

/**
 * Rule 4: e-mail and login name are fixed; the current value may be re-sent in any letter case
 * (the stored spelling is kept).
 */
function assertIdentityUnchanged(user: UserRow, patch: UserPatch): void {
  const fixed = [
    ['email', patch.email, user.email_key],
    ['username', patch.username, user.username_key],
  ] as const;
  for (const [field, sent, current] of fixed) {
    if (sent !== undefined && identityKey(sent) !== current) {
      throw new DomainError('IDENTITY_IMMUTABLE', `${field} cannot be changed`, { field });
    }
  }
}

/**
 * Rule 4: only fields present are written; `members` with rows replaces every assignment,
 * absent or `[]` keeps them. Nothing is written (and `updatedAt` stays) when nothing changes,
 * so `updatedFrom` sync sees only real changes. Call inside a transaction.
 */
async function updateDirectoryUser(
  trx: Db,
  tenant: TenantRow,
  user: UserRow,
  patch: UserPatch,
  now: string,
): Promise<void> {
  assertIdentityUnchanged(user, patch);
  const members =
    patch.members && patch.members.length > 0
      ? await resolveMembers(trx, tenant.id, patch.members)
      : null;
  const changes: Updateable<UsersTable> = {};
  for (const [field, column] of Object.entries(profileColumns)) {
    const sent = patch[field as ProfileField];
    if (sent === undefined) continue;
    const value = blankToNull(sent);
    if (value !== user[column]) changes[column] = value;
  }
  const membersChanged =
    members !== null && !sameMembers(await membershipsOf(trx, user.id), members);
  if (Object.keys(changes).length === 0 && !membersChanged) return;
  await updateUserRow(trx, user.id, { ...changes, updated_at: now });
  if (members !== null && membersChanged) await replaceMemberships(trx, user.id, members, now);
}

/**
 * Creates a user of `tenant` (endpoint 13, and the operator CLI). By default, as rule 3 says:
 * internal, placed at the tenant root, status 1 (waiting: no password yet). `code` is optional
 * here (the route requires it). Validates `input` like the API does; throws `DomainError`.
 */
export async function createUser(
  deps: AppDeps,
  tenant: TenantRow,
  input: UserInput,
  options: CreateUserOptions = {},
): Promise<UserView> {
  const valid = parsed(UserInputSchema, input);
  const now = isoNow(deps.clock);
  return inTransaction(deps.db, async (trx) =>
    viewOf(trx, await insertDirectoryUser(trx, tenant, valid, options, now)),
  );
}

/** Endpoint 12. */
export async function getUser(deps: AppDeps, tenant: TenantRow, code: string): Promise<UserView> {
  return viewOf(deps.db, (await userByCode(deps.db, tenant, code)).id);
}

/** Endpoint 14: partial update; returns the user as it now is. */
export async function updateUser(
  deps: AppDeps,
  tenant: TenantRow,
  code: string,
  patch: UserPatch,
): Promise<UserView> {
  const now = isoNow(deps.clock);
  return inTransaction(deps.db, async (trx) => {
    const user = await userByCode(trx, tenant, code);
    await updateDirectoryUser(trx, tenant, user, patch, now);
    return viewOf(trx, user.id);
  });
}

/** Endpoint 15: only 2 (active) and 3 (locked) may be set; setting the current one is a no-op. */
export async function setUserStatus(
  deps: AppDeps,
  tenant: TenantRow,
  code: string,
  status: number,
): Promise<UserView> {
  if (status !== userStatus.active && status !== userStatus.locked) {
    throw new DomainError('VALIDATION_ERROR', 'status: only 2 (active) or 3 (locked)', {
      field: 'status',
    });
  }
  const now = isoNow(deps.clock);
  return inTransaction(deps.db, async (trx) => {
    const user = await userByCode(trx, tenant, code);
    if (user.status !== status) await updateUserRow(trx, user.id, { status, updated_at: now });
    return viewOf(trx, user.id);
  });
}

/** The `code` of a bulk row as it will be matched, when the row has one. */
function bulkCode(row: unknown): string | null {
  const code = (row as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code.trim() : null;
}

/** Rule 6: a code repeated in the payload fails the whole request before anything is written. */
function assertCodesUnique(rows: unknown[]): void {
  const seen = new Set<string>();
  for (const [index, row] of rows.entries()) {
    const code = bulkCode(row);
    if (code === null || code === '') continue;
    if (seen.has(code)) {
      throw new DomainError(
        'USER_CODE_DUPLICATED_IN_PAYLOAD',
        `User code ${code} appears more than once in users`,
        { field: `users.${index}.code` },
      );
    }
    seen.add(code);
  }
}

/** One bulk row in its own transaction: update the user holding the code, or create one. */
async function upsertRow(deps: AppDeps, tenant: TenantRow, row: unknown): Promise<BulkRowResult> {
  const code = bulkCode(row);
  try {
    const input = parsed(UserRowSchema, row);
    const now = isoNow(deps.clock);
    const action = await inTransaction(deps.db, async (trx) => {
      const existing = await findUserByCode(trx, tenant, input.code);
      if (existing) {
        await updateDirectoryUser(trx, tenant, existing, input, now);
        return 'updated' as const;
      }
      await insertDirectoryUser(trx, tenant, input, {}, now);
      return 'created' as const;
    });
    return { code, action };
  } catch (error) {
    // A refused row is reported in its result; anything else is a fault and propagates.
    if (!(error instanceof DomainError)) throw error;
    return { code, action: 'failed', errorCode: error.code, message: error.message };
  }
}

/**
 * Endpoint 16: upsert by `code`, each row in its own transaction so a failed row undoes nothing
 * else. A row that is not a valid user (bad e-mail, missing code...) fails alone.
 */
export async function bulkUpsertUsers(
  deps: AppDeps,
  tenant: TenantRow,
  rows: unknown[],
): Promise<BulkResult> {
  assertCodesUnique(rows);
  const results: BulkRowResult[] = [];
  for (const row of rows) results.push(await upsertRow(deps, tenant, row));
  const counted = (action: BulkRowResult['action']) =>
    results.filter((result) => result.action === action).length;
  return {
    total: rows.length,
    created: counted('created'),
    updated: counted('updated'),
    failed: counted('failed'),
    results,
  };
}
