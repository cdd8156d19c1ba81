import type { Insertable, Selectable, Updateable } from 'kysely';
import { identityKey } from '../auth/queries';
import type { Db } from '../db/database';
import type { UsersTable, UserType } from '../db/schema';
import { ApiError } from '../errors/apiError';

export type UserRow = Selectable<UsersTable>;

/** Profile fields as the spec names them; the row mapping lives here only. */
export interface UserFields {
  tenantId: number | null;
  organizationId: number | null;
  code: string | null;
  username: string;
  email: string | null;
  name?: string | null | undefined;
  phone?: string | null | undefined;
  identityNumber?: string | null | undefined;
  taxCode?: string | null | undefined;
  address?: string | null | undefined;
  gender?: string | null | undefined;
  status: number;
  type: UserType;
  isSuperAdmin?: boolean | undefined;
  passwordHash?: string | null | undefined;
}

function identityTaken(message: string, code: string, field: string): ApiError {
  return new ApiError(409, code, message, { field });
}

/**
 * Checks the tenant-wide uniqueness of `code` and the uniqueness of login name and e-mail, with
 * the spec's 409 codes. Login accepts "e-mail or login name", so a login name may not equal
 * another account's e-mail and the reverse. Where: an internal account (the default, and what the
 * directory API creates) is checked against every account of the system ("exists in the system");
 * an external account (an outside signer) against the accounts of its own tenant and the internal
 * accounts of every tenant, so one citizen id may name an outside signer in each tenant while an
 * internal login name or e-mail still names one account only. Migration 8's indexes back this up.
 * Run inside the transaction that writes the row.
 */
export async function assertIdentityFree(
  db: Db,
  fields: {
    tenantId: number | null;
    username?: string;
    email?: string | null;
    code?: string | null;
    type?: UserType;
  },
  exceptUserId?: number,
): Promise<void> {
  const base = () => db.selectFrom('users').select('id');
  const taken = async (
    filter: (query: ReturnType<typeof base>) => ReturnType<typeof base>,
  ): Promise<boolean> => {
    const query = filter(base());
    const scoped = exceptUserId === undefined ? query : query.where('id', '!=', exceptUserId);
    return (await scoped.executeTakeFirst()) !== undefined;
  };
  const tenantId = fields.tenantId;
  const inScope = (query: ReturnType<typeof base>) =>
    fields.type !== 'external'
      ? query
      : query.where((eb) =>
          eb.or([
            eb('type', '=', 'internal'),
            tenantId === null ? eb('tenant_id', 'is', null) : eb('tenant_id', '=', tenantId),
          ]),
        );
  const loginTaken = (key: string) =>
    taken((query) =>
      inScope(query).where((eb) =>
        eb.or([eb('username_key', '=', key), eb('email_key', '=', key)]),
      ),
    );
  if (fields.code && tenantId !== null) {
    const code = fields.code;
    if (await taken((query) => query.where('tenant_id', '=', tenantId).where('code', '=', code))) {
      throw identityTaken(
        `User code ${code} belongs to another user`,
        'USER_CODE_ALREADY_EXISTS',
        'code',
      );
    }
  }
  // E-mail first: a login name defaulted from the e-mail then reports the field the caller sent.
  if (fields.email && (await loginTaken(identityKey(fields.email)))) {
    throw identityTaken(`E-mail ${fields.email} already exists`, 'EMAIL_ALREADY_EXISTS', 'email');
  }
  if (fields.username !== undefined && (await loginTaken(identityKey(fields.username)))) {
    throw identityTaken(
      `Login name ${fields.username} already exists`,
      'USERNAME_ALREADY_EXISTS',
      'username',
    );
  }
}

export function toUserRow(fields: UserFields, now: string): Insertable<UsersTable> {
  return {
    tenant_id: fields.tenantId,
    organization_id: fields.organizationId,
    code: fields.code,
    username: fields.username,
    username_key: identityKey(fields.username),
    email: fields.email,
    email_key: fields.email ? identityKey(fields.email) : null,
    name: fields.name ?? null,
    phone: fields.phone ?? null,
    identity_number: fields.identityNumber ?? null,
    tax_code: fields.taxCode ?? null,
    address: fields.address ?? null,
    gender: fields.gender ?? null,
    status: fields.status,
    type: fields.type,
    is_super_admin: fields.isSuperAdmin ? 1 : 0,
    password_hash: fields.passwordHash ?? null,
    created_at: now,
    updated_at: now,
  };
}

/** Inserts one user after the uniqueness checks. Call inside a transaction. */
export async function insertUser(db: Db, fields: UserFields, now: string): Promise<UserRow> {
  await assertIdentityFree(db, fields);
  return db
    .insertInto('users')
    .values(toUserRow(fields, now))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Assigns one role per organization: a later row for the same organization replaces the earlier. */
export async function replaceMemberships(
  db: Db,
  userId: number,
  members: { organizationId: number; roleId: number }[],
  now: string,
): Promise<void> {
  await db.deleteFrom('memberships').where('user_id', '=', userId).execute();
  if (members.length === 0) return;
  await db
    .insertInto('memberships')
    .values(
      members.map((m) => ({
        user_id: userId,
        organization_id: m.organizationId,
        role_id: m.roleId,
        created_at: now,
      })),
    )
    .execute();
}

/** Writes changed columns of one user. Call inside a transaction. */
export async function updateUserRow(
  db: Db,
  userId: number,
  changes: Updateable<UsersTable>,
): Promise<void> {
  await db.updateTable('users').set(changes).where('id', '=', userId).execute();
}
