import type { Context } from 'hono';
import { originOf, userActor } from '../audit/origin';
import type { AuditActor, AuditOrigin } from '../audit/subject';
import { requireActor } from '../auth/authenticate';
import { holdsPermission } from '../auth/permissions';
import type { Actor, AppDeps, AppEnv, Principal } from '../context';
import { DomainError } from '../errors/domainError';
import type { Permission } from '../tenancy/permissionCatalog';
import { type ContractRow, type ContractScope, contractByUuid } from './queries';

/** Either lets a caller read contracts (its own, or every one of the tenant). */
export const contractReaders: Permission[] = ['contract:view', 'contract:view-all'];

/** A caller of the contract API: who, in which tenant, seeing which contracts. */
export interface ContractCaller {
  actor: Actor;
  /** The caller as the audit trail names them. */
  auditActor: AuditActor;
  scope: ContractScope;
  organizationId: number | null;
  origin: AuditOrigin;
}

/**
 * The caller's tenant and scope: contracts of the caller's tenant, only their own unless they
 * hold `contract:view-all`. An organization key acts in its tenant; a token in its user's.
 */
export async function callerOf(c: Context<AppEnv>): Promise<ContractCaller> {
  return callerOfPrincipal(c.get('deps'), c.get('principal'), originOf(c));
}

/** {@link callerOf} for a principal known otherwise (a web page's signed-in viewer). */
export async function callerOfPrincipal(
  deps: AppDeps,
  principal: Principal,
  origin: AuditOrigin,
): Promise<ContractCaller> {
  const actor = requireActor(principal);
  const tenantId = principal.kind === 'apiKey' ? principal.tenantId : actor.tenantId;
  if (tenantId === null) {
    throw new DomainError('FORBIDDEN', 'The account belongs to no tenant');
  }
  const seesAll = await holdsPermission(deps, principal, 'contract:view-all');
  return {
    actor,
    auditActor: await userActor(deps.db, actor.id, actor.username),
    scope: { tenantId, ownerUserId: seesAll ? null : actor.id },
    organizationId: principal.kind === 'apiKey' ? principal.organizationId : null,
    origin,
  };
}

export function contractNotFound(id: string): DomainError {
  return new DomainError('CONTRACT_NOT_FOUND', `No contract ${id}`, { field: 'id' });
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
