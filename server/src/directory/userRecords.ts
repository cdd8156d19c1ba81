import type { Insertable } from 'kysely';
import { identityKey, type UserRow } from '../auth/queries';
import type { Db } from '../db/database';
import type { UsersTable, UserType } from '../db/schema';
import { DomainError } from '../errors/domainError';
import {
  deleteMemberships,
  insertMemberships,
  insertUserRow,
  loginKeyTaken,
  userCodeTaken,
} from './queries/users';

export type { UserRow };

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

function identityTaken(message: string, code: string, field: string): DomainError {
  return new DomainError(code, message, { field });
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
  const tenantId = fields.tenantId;
  const externalOfTenant = fields.type === 'external' ? { tenantId } : undefined;
  const loginTaken = (key: string) => loginKeyTaken(db, key, externalOfTenant, exceptUserId);
  if (fields.code && tenantId !== null) {
    const code = fields.code;
    if (await userCodeTaken(db, tenantId, code, exceptUserId)) {
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
  return insertUserRow(db, toUserRow(fields, now));
}

/** Assigns one role per organization: a later row for the same organization replaces the earlier. */
export async function replaceMemberships(
  db: Db,
  userId: number,
  members: { organizationId: number; roleId: number }[],
  now: string,
): Promise<void> {
  await deleteMemberships(db, userId);
  if (members.length === 0) return;
  await insertMemberships(db, userId, members, now);
}
