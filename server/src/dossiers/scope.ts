import type { MiddlewareHandler } from 'hono';
import { requireActor, userById } from '../auth/authenticate';
import { holdsPermission } from '../auth/permissions';
import type { AppDeps, AppEnv, Principal } from '../context';
import type { Db } from '../db/database';
import { DomainError, errors } from '../errors/domainError';
import type { Permission } from '../tenancy/permissionCatalog';
import {
  type DossierRow,
  type DossierScope,
  scopedDossierByDocumentId,
  scopedDossierById,
  scopeMemberships,
} from './queries';

export async function scopeOf(db: Db, principal: Principal): Promise<DossierScope> {
  const actor = requireActor(principal);
  if (principal.kind === 'apiKey' && principal.keyKind === 'organization') {
    return {
      tenantId: principal.tenantId!,
      userId: actor.id,
      organizationId: principal.organizationId,
      memberOrganizationIds: [],
      roleIds: [],
    };
  }
  if (actor.tenantId === null)
    throw new DomainError('FORBIDDEN', 'The account belongs to no tenant');
  const memberships = await scopeMemberships(db, actor.id);
  return {
    tenantId: actor.tenantId,
    userId: actor.id,
    organizationId: null,
    memberOrganizationIds: memberships.map((m) => m.organization_id),
    roleIds: memberships.map((m) => m.role_id),
  };
}

/** The dossier with this documentId in the caller's scope, or 404 (existence is not revealed). */
export async function dossierByDocumentId(
  db: Db,
  scope: DossierScope,
  documentId: string,
): Promise<DossierRow> {
  const dossier = await scopedDossierByDocumentId(db, scope, documentId);
  if (!dossier) {
    throw new DomainError('DOCUMENT_NOT_FOUND', `No dossier with documentId ${documentId}`, {
      field: 'documentId',
    });
  }
  return dossier;
}

/** The dossier with this id (folderId) in the caller's scope, or 404 (existence is not revealed). */
export async function dossierInScopeById(
  db: Db,
  scope: DossierScope,
  dossierId: number,
): Promise<DossierRow> {
  const dossier = await scopedDossierById(db, scope, dossierId);
  if (!dossier) {
    throw new DomainError('DOCUMENT_NOT_FOUND', `No dossier ${dossierId}`, { field: 'folderId' });
  }
  return dossier;
}

/**
 * 403 unless the caller may read dossiers, files, tasks and history with `permission`: an
 * outside signer (user type external) always may, within its own participation; anyone else
 * needs the permission. The API's guard below and the web app's pages ask this alike.
 */
export async function ensurePermissionOrSigner(
  deps: AppDeps,
  principal: Principal,
  permission: Permission,
): Promise<void> {
  if (principal.kind !== 'apiKey' && principal.actor) {
    const user = await userById(deps, principal.actor.id);
    if (user?.type === 'external') return;
  }
  if (!(await holdsPermission(deps, principal, permission))) {
    throw errors.forbidden();
  }
}

/**
 * `requirePermission` for the read endpoints of dossiers, files, tasks and history, except for
 * outside signers. An external account holds no role, hence no permission, yet it is given its
 * tasks, the files of those tasks (`downloadUrl`) and "history only for dossiers they took part
 * in" through a partner token; `dossierInScope` already limits such a caller to its own
 * participation. An API key always needs the permission.
 */
export function requirePermissionOrSigner(permission: Permission): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await ensurePermissionOrSigner(c.get('deps'), c.get('principal'), permission);
    await next();
  };
}
