import type { Insertable, Selectable } from 'kysely';
import { identityKey } from '../auth/queries';
import type { Db } from '../db/database';
import type { UsersTable, UserType } from '../db/schema';
import { ApiError } from '../http/errors';

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

/**
 * Checks the system-wide uniqueness of login name and e-mail and the tenant-wide uniqueness of
 * `code`, with the spec's 409 codes. Run inside the transaction that writes the row.
 */
export async function assertIdentityFree(
  db: Db,
  fields: {
    tenantId: number | null;
    username?: string;
    email?: string | null;
    code?: string | null;
  },
  exceptUserId?: number,
): Promise<void> {
  const others = (query: ReturnType<typeof base>) =>
    exceptUserId === undefined ? query : query.where('id', '!=', exceptUserId);
  const base = () => db.selectFrom('users').select('id');
  if (fields.username !== undefined) {
    const taken = await others(
      base().where('username_key', '=', identityKey(fields.username)),
    ).executeTakeFirst();
    if (taken) {
      throw new ApiError(
        409,
        'USERNAME_ALREADY_EXISTS',
        `Login name ${fields.username} already exists`,
        {
          field: 'username',
        },
      );
    }
  }
  if (fields.email) {
    const taken = await others(
      base().where('email_key', '=', identityKey(fields.email)),
    ).executeTakeFirst();
    if (taken) {
      throw new ApiError(409, 'EMAIL_ALREADY_EXISTS', `E-mail ${fields.email} already exists`, {
        field: 'email',
      });
    }
  }
  if (fields.code && fields.tenantId !== null) {
    const taken = await others(
      base().where('tenant_id', '=', fields.tenantId).where('code', '=', fields.code),
    ).executeTakeFirst();
    if (taken) {
      throw new ApiError(
        409,
        'USER_CODE_ALREADY_EXISTS',
        `User code ${fields.code} belongs to another user`,
        {
          field: 'code',
        },
      );
    }
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
