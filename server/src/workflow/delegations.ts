import { findUserByLogin, userStatus } from '../auth/queries';
import type { AppDeps } from '../context';
import { type Db, inTransaction } from '../db/database';
import { DomainError } from '../errors/domainError';
import { isoNow } from '../platform/clock';
import type { TenantRow } from '../tenancy/resolveTenant';
import {
  type DelegationRow,
  insertDelegation,
  markDelegationRevoked,
  namedDelegation,
  namedDelegations,
} from './queries/delegations';

export type DelegationState = 'scheduled' | 'active' | 'ended' | 'revoked';

/** A delegation as the operator sees it: login names, never numeric user ids. */
export interface DelegationView {
  id: number;
  tenantCode: string;
  fromUsername: string;
  toUsername: string;
  startsAt: string;
  endsAt: string;
  createdAt: string;
  revokedAt: string | null;
  state: DelegationState;
}

export interface NewDelegation {
  fromUsername: string;
  toUsername: string;
  /** ISO 8601 with Z or an offset. */
  startsAt: string;
  endsAt: string;
}

function invalid(field: string, message: string): DomainError {
  return new DomainError('VALIDATION_ERROR', message, { field });
}

/** An ISO 8601 date-time with `Z` or an offset (what the CLI and the spec call ISO), as UTC. */
export function delegationInstant(raw: string, field: string): string {
  const valid = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(raw);
  const parsed = new Date(raw);
  if (!valid || Number.isNaN(parsed.getTime())) {
    throw invalid(
      field,
      `${field} must be an ISO 8601 date-time with Z or an offset, got "${raw}"`,
    );
  }
  return parsed.toISOString();
}

function stateOf(row: DelegationRow, now: string): DelegationState {
  if (row.revoked_at !== null) return 'revoked';
  if (now < row.starts_at) return 'scheduled';
  return now < row.ends_at ? 'active' : 'ended';
}

async function delegationUser(db: Db, tenant: TenantRow, username: string, field: string) {
  const user = await findUserByLogin(db, username, tenant.id);
  if (!user || user.tenant_id !== tenant.id) {
    throw new DomainError('USER_NOT_FOUND', `No user ${username} in tenant ${tenant.code}`, {
      field,
    });
  }
  if (user.type !== 'internal') {
    throw new DomainError(
      'DELEGATION_INTERNAL_ONLY',
      `${username} is an outside signer; only internal staff delegate or receive tasks`,
      { field },
    );
  }
  return user;
}

/**
 * Lets `toUsername` see and act on the pending tasks of `fromUsername` between `startsAt`
 * (inclusive) and `endsAt` (exclusive). Both are internal users of the tenant and differ; the
 * period is not empty and not already over. Delegation is not transitive.
 */
export async function createDelegation(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  tenant: TenantRow,
  input: NewDelegation,
): Promise<DelegationView> {
  const startsAt = delegationInstant(input.startsAt, 'startsAt');
  const endsAt = delegationInstant(input.endsAt, 'endsAt');
  const now = isoNow(deps.clock);
  if (startsAt >= endsAt) throw invalid('endsAt', 'endsAt must be after startsAt');
  if (endsAt <= now) throw invalid('endsAt', `endsAt ${input.endsAt} is already over`);
  return inTransaction(deps.db, async (trx) => {
    const from = await delegationUser(trx, tenant, input.fromUsername, 'fromUsername');
    const to = await delegationUser(trx, tenant, input.toUsername, 'toUsername');
    if (from.id === to.id) {
      throw new DomainError('DELEGATION_TO_SELF', 'A user cannot delegate to themselves', {
        field: 'toUsername',
      });
    }
    if (to.status === userStatus.locked) {
      throw new DomainError('USER_LOCKED', `${to.username} is locked`, { field: 'toUsername' });
    }
    const row = await insertDelegation(trx, {
      tenant_id: tenant.id,
      from_user_id: from.id,
      to_user_id: to.id,
      starts_at: startsAt,
      ends_at: endsAt,
      created_at: now,
      revoked_at: null,
    });
    return view(row, tenant.code, from.username, to.username, now);
  });
}

function view(
  row: DelegationRow,
  tenantCode: string,
  fromUsername: string,
  toUsername: string,
  now: string,
): DelegationView {
  return {
    id: row.id,
    tenantCode,
    fromUsername,
    toUsername,
    startsAt: row.starts_at,
    endsAt: row.ends_at,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    state: stateOf(row, now),
  };
}

/** Every delegation of one tenant (or of all), newest first. */
export async function listDelegations(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  tenantId?: number,
): Promise<DelegationView[]> {
  const now = isoNow(deps.clock);
  const rows = await namedDelegations(deps.db, tenantId);
  return rows.map((row) => view(row, row.tenant_code, row.from_username, row.to_username, now));
}

/** Ends a delegation now. Revoking twice keeps the first revocation time. */
export async function revokeDelegation(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  id: number,
): Promise<DelegationView> {
  const now = isoNow(deps.clock);
  return inTransaction(deps.db, async (trx) => {
    await markDelegationRevoked(trx, id, now);
    const row = await namedDelegation(trx, id);
    if (!row) {
      throw new DomainError('DELEGATION_NOT_FOUND', `No delegation with id ${id}`, {
        field: 'id',
      });
    }
    return view(row, row.tenant_code, row.from_username, row.to_username, now);
  });
}
