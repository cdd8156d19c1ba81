import crypto from 'node:crypto';
import { identityKey, userStatus } from '../auth/queries';
import type { Db } from '../db/database';
import { insertUser } from '../directory/userRecords';
import { ApiError } from '../http/errors';
import type { GuestAccountSpec } from './signers';

/**
 * Outside signers get an external user account of the tenant, so they can sign, get a partner
 * token and read their tasks. Its `code` is generated in the service's own format, `EXT-` and
 * 16 hex digits, which personnel codes of internal staff are not expected to use.
 */
export function newExternalUserCode(): string {
  return `EXT-${crypto.randomBytes(8).toString('hex').toUpperCase()}`;
}

/** Whether a login name or e-mail is already some account's login name or e-mail. */
async function loginTaken(trx: Db, value: string): Promise<boolean> {
  const key = identityKey(value);
  const row = await trx
    .selectFrom('users')
    .select('id')
    .where((eb) => eb.or([eb('username_key', '=', key), eb('email_key', '=', key)]))
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The tenant's external account with this username, reused as it is (a later dossier does not
 * overwrite its profile), or a new one: external, in no organization, waiting for activation
 * (no password). Its e-mail is recorded only when no other account uses it (login accepts an
 * e-mail, so e-mails are unique); the turn keeps the submitted e-mail anyway. A username that is
 * another tenant's or an internal account's login gives 409 SIGNER_ACCOUNT_CONFLICT.
 * Call inside the creation transaction.
 */
export async function guestAccountId(
  trx: Db,
  tenantId: number,
  spec: GuestAccountSpec,
  now: string,
): Promise<number> {
  const key = identityKey(spec.username);
  const existing = await trx
    .selectFrom('users')
    .select(['id', 'tenant_id', 'type'])
    .where((eb) => eb.or([eb('username_key', '=', key), eb('email_key', '=', key)]))
    .execute();
  const own = existing.find((user) => user.tenant_id === tenantId && user.type === 'external');
  if (own) return own.id;
  if (existing.length > 0) {
    throw new ApiError(
      409,
      'SIGNER_ACCOUNT_CONFLICT',
      `The signer's login name ${spec.username} belongs to an account that is not an outside signer of this tenant`,
      { field: spec.usernameField },
    );
  }
  const email = spec.email !== null && !(await loginTaken(trx, spec.email)) ? spec.email : null;
  const user = await insertUser(
    trx,
    {
      tenantId,
      organizationId: null,
      code: newExternalUserCode(),
      username: spec.username,
      email,
      name: spec.name,
      phone: spec.phone,
      identityNumber: spec.identityNumber,
      taxCode: spec.taxCode,
      status: userStatus.waiting,
      type: 'external',
    },
    now,
  );
  return user.id;
}
