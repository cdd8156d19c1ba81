import type { MiddlewareHandler } from 'hono';
import type { ExpressionBuilder, Selectable } from 'kysely';
import { requireActor } from '../auth/authenticate';
import { requirePermission } from '../auth/permissions';
import { findUserById } from '../auth/queries';
import type { AppEnv, Principal } from '../context';
import type { Db } from '../db/database';
import type { Database, DossiersTable } from '../db/schema';
import { ApiError } from '../errors/apiError';
import { filesWithNewestVersion, type NewestFile } from '../files/queries';
import type { Permission } from '../tenancy/permissionCatalog';

export type DossierRow = Selectable<DossiersTable>;

/**
 * Which dossiers a caller of the integration API may see. An organization key sees its
 * organization's dossiers (its bound user is the actor). A user token sees, in the user's
 * tenant, the dossiers of organizations the user belongs to and those the user takes part in
 * (turn assignee or actor, holder of a turn's role, creator): an external signer only the latter.
 */
export interface DossierScope {
  tenantId: number;
  userId: number;
  /** Set for organization keys: only this organization. */
  organizationId: number | null;
  /** Organizations the user belongs to (user tokens). */
  memberOrganizationIds: number[];
  /** Roles the user holds (user tokens), for role-based turns. */
  roleIds: number[];
}

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
    throw new ApiError(403, 'FORBIDDEN', 'The account belongs to no tenant');
  const memberships = await db
    .selectFrom('memberships')
    .select(['organization_id', 'role_id'])
    .where('user_id', '=', actor.id)
    .execute();
  return {
    tenantId: actor.tenantId,
    userId: actor.id,
    organizationId: null,
    memberOrganizationIds: memberships.map((m) => m.organization_id),
    roleIds: memberships.map((m) => m.role_id),
  };
}

/** The WHERE condition "dossier `d` is in scope", for queries that alias dossiers as `d`. */
export function dossierInScope(scope: DossierScope) {
  return (eb: ExpressionBuilder<Database & { d: DossiersTable }, 'd'>) => {
    const tenant = eb('d.tenant_id', '=', scope.tenantId);
    if (scope.organizationId !== null) {
      return eb.and([tenant, eb('d.organization_id', '=', scope.organizationId)]);
    }
    const participates = eb.exists(
      eb
        .selectFrom('turns as scope_turn')
        .select('scope_turn.id')
        .whereRef('scope_turn.dossier_id', '=', 'd.id')
        .where((inner) =>
          inner.or([
            inner('scope_turn.assignee_user_id', '=', scope.userId),
            inner('scope_turn.acted_by_user_id', '=', scope.userId),
            ...(scope.roleIds.length > 0 ? [inner('scope_turn.role_id', 'in', scope.roleIds)] : []),
          ]),
        ),
    );
    return eb.and([
      tenant,
      eb.or([
        eb('d.created_by_user_id', '=', scope.userId),
        ...(scope.memberOrganizationIds.length > 0
          ? [eb('d.organization_id', 'in', scope.memberOrganizationIds)]
          : []),
        participates,
      ]),
    ]);
  };
}

/** The dossier with this documentId in the caller's scope, or 404 (existence is not revealed). */
export async function dossierByDocumentId(
  db: Db,
  scope: DossierScope,
  documentId: string,
): Promise<DossierRow> {
  const dossier = await db
    .selectFrom('dossiers as d')
    .selectAll('d')
    .where('d.document_id', '=', documentId)
    .where(dossierInScope(scope))
    .orderBy('d.id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!dossier) {
    throw new ApiError(404, 'DOCUMENT_NOT_FOUND', `No dossier with documentId ${documentId}`, {
      field: 'documentId',
    });
  }
  return dossier;
}

/**
 * `requirePermission` for the read endpoints of dossiers, files, tasks and history, except for
 * outside signers. An external account holds no role, hence no permission, yet it is given its
 * tasks, the files of those tasks (`downloadUrl`) and "history only for dossiers they took part
 * in" through a partner token; `dossierInScope` already limits such a caller to its own
 * participation. An API key always needs the permission.
 */
export function requirePermissionOrSigner(permission: Permission): MiddlewareHandler<AppEnv> {
  const guard = requirePermission(permission);
  return async (c, next) => {
    const principal = c.get('principal');
    if (principal.kind !== 'apiKey') {
      const user = await findUserById(c.get('deps').db, principal.actor.id);
      if (user?.type === 'external') return next();
    }
    return guard(c, next);
  };
}

/** The file with this uuid if its dossier is in the caller's scope (else undefined: 404). */
export function fileInScope(
  db: Db,
  scope: DossierScope,
  fileUuid: string,
): Promise<NewestFile | undefined> {
  return filesWithNewestVersion(db)
    .innerJoin('dossiers as d', 'd.id', 'f.dossier_id')
    .where('f.uuid', '=', fileUuid)
    .where(dossierInScope(scope))
    .executeTakeFirst();
}
