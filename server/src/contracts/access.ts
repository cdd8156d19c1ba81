import type { Context } from 'hono';
import { requireActor } from '../auth/authenticate';
import { holdsPermission } from '../auth/permissions';
import { findUserById } from '../auth/queries';
import { clientAddress } from '../auth/rateLimit';
import type { Actor, AppDeps, AppEnv, Principal } from '../context';
import { ApiError } from '../errors/apiError';
import type { AuditActor, AuditOrigin } from './audit';
import { type ContractRow, type ContractScope, contractByUuid } from './queries';

/** A caller of the contract API: who, in which tenant, seeing which contracts. */
export interface ContractCaller {
  actor: Actor;
  /** The caller as the audit trail names them. */
  auditActor: AuditActor;
  scope: ContractScope;
  organizationId: number | null;
  origin: AuditOrigin;
}

/** User agents are kept for the trail, not as an unbounded input. */
const userAgentLimit = 512;

/** Where the request came from: the address (TRUST_PROXY decides) and the user agent. */
export function originOf(c: Context<AppEnv>): AuditOrigin {
  const userAgent = c.req.header('user-agent');
  return {
    clientAddress: clientAddress(c),
    userAgent: userAgent ? userAgent.slice(0, userAgentLimit) : null,
  };
}

/**
 * The caller's tenant and scope: contracts of the caller's tenant, only their own unless they
 * hold `contract:view-all`. An organization key acts in its tenant; a token in its user's.
 */
export async function callerOf(c: Context<AppEnv>): Promise<ContractCaller> {
  const deps = c.get('deps');
  const principal: Principal = c.get('principal');
  const actor = requireActor(principal);
  const tenantId = principal.kind === 'apiKey' ? principal.tenantId : actor.tenantId;
  if (tenantId === null) {
    throw new ApiError(403, 'FORBIDDEN', 'The account belongs to no tenant');
  }
  const seesAll = await holdsPermission(deps, principal, 'contract:view-all');
  const user = await findUserById(deps.db, actor.id);
  const name = user?.name?.trim() || actor.username;
  return {
    actor,
    auditActor: {
      kind: 'user',
      userId: actor.id,
      name: user?.email ? `${name} <${user.email}>` : name,
    },
    scope: { tenantId, ownerUserId: seesAll ? null : actor.id },
    organizationId: principal.kind === 'apiKey' ? principal.organizationId : null,
    origin: originOf(c),
  };
}

export function contractNotFound(id: string): ApiError {
  return new ApiError(404, 'CONTRACT_NOT_FOUND', `No contract ${id}`, { field: 'id' });
}

/** The contract in the caller's scope, or 404 (another tenant's contract is not revealed). */
export async function contractInScope(
  deps: Pick<AppDeps, 'db'>,
  caller: ContractCaller,
  id: string,
): Promise<ContractRow> {
  const contract = await contractByUuid(deps.db, caller.scope, id);
  if (!contract) throw contractNotFound(id);
  return contract;
}
