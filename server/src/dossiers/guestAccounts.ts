import crypto from 'node:crypto';
import { identityKey, userStatus } from '../auth/queries';
import type { Db } from '../db/database';
import { insertUser } from '../directory/userRecords';
import { DomainError } from '../errors/domainError';
import { signerLoginHolders } from './queries';
import type { GuestAccountSpec } from './signers';

/**
 * Outside signers get an external user account of the tenant, so they can sign, get a partner
 * token and read their tasks. Its `code` is generated in the service's own format, `EXT-` and
 * 16 hex digits, which personnel codes of internal staff are not expected to use.
 */
export function newExternalUserCode(): string {
  return `EXT-${crypto.randomBytes(8).toString('hex').toUpperCase()}`;
}

/** Accounts an outside signer's login name or e-mail `value` must not clash with. */
function loginHolders(trx: Db, tenantId: number, value: string) {
  return signerLoginHolders(trx, tenantId, identityKey(value));
}

/**
 * The tenant's external account with this username, reused as it is (a later dossier does not
 * overwrite its profile), or a new one: external, in no organization, waiting for activation
 * (no password). Outside signers are per tenant: the same citizen id signing for another tenant
 * has an account there too, with the same username. Its e-mail is recorded only when no account
 * of the tenant and no internal account uses it (login accepts an e-mail); the turn keeps the
 * submitted e-mail anyway. A username that is the login name or e-mail of an internal account
 * (of any tenant: internal logins are unique in the whole system) gives 409
 * SIGNER_ACCOUNT_CONFLICT. Call inside the creation transaction.
 */
export async function guestAccountId(
  trx: Db,
  tenantId: number,
  spec: GuestAccountSpec,
  now: string,
): Promise<number> {
  const holders = await loginHolders(trx, tenantId, spec.username);
  const own = holders.find((user) => user.tenant_id === tenantId && user.type === 'external');
  if (own) return own.id;
  if (holders.length > 0) {
    throw new DomainError(
      'SIGNER_ACCOUNT_CONFLICT',
      `The signer's login name ${spec.username} belongs to an internal account`,
      { field: spec.usernameField },
    );
  }
  const email =
    spec.email !== null && (await loginHolders(trx, tenantId, spec.email)).length === 0
      ? spec.email
      : null;
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
