import type { Db } from '../../db/database';
import { type Paging, paged, searchMatches, type UpdatedBetween } from './search';

export interface OrganizationFilter extends UpdatedBetween {
  tenantId: number;
  code?: string | undefined;
  parentId?: number | undefined;
  status?: number | undefined;
  type?: number | undefined;
  q?: string | undefined;
}

/**
 * Endpoint 9: live organizations of one tenant, oldest first. `parentCode` is the parent's code
 * only when the parent is a live organization of the same tenant.
 */
export function findOrganizations(db: Db, filter: OrganizationFilter, paging: Paging) {
  const filtered = db
    .selectFrom('organizations as o')
    .leftJoin('organizations as parent', (join) =>
      join
        .onRef('parent.id', '=', 'o.parent_id')
        .onRef('parent.tenant_id', '=', 'o.tenant_id')
        .on('parent.deleted_at', 'is', null),
    )
    .where('o.tenant_id', '=', filter.tenantId)
    .where('o.deleted_at', 'is', null)
    .$if(filter.code !== undefined, (q) => q.where('o.code', '=', filter.code!))
    .$if(filter.parentId !== undefined, (q) => q.where('o.parent_id', '=', filter.parentId!))
    .$if(filter.status !== undefined, (q) => q.where('o.status', '=', filter.status!))
    .$if(filter.type !== undefined, (q) => q.where('o.type', '=', filter.type!))
    .$if(filter.q !== undefined, (q) => q.where(searchMatches('o.search_key', filter.q!)))
    .$if(filter.updatedFrom !== undefined, (q) =>
      q.where('o.updated_at', '>=', filter.updatedFrom!),
    )
    .$if(filter.updatedTo !== undefined, (q) => q.where('o.updated_at', '<=', filter.updatedTo!));
  return paged(
    filtered,
    (q) =>
      q
        .select([
          'o.code',
          'o.name',
          'parent.code as parentCode',
          'o.type',
          'o.status',
          'o.address',
          'o.phone',
        ])
        .orderBy('o.id'),
    paging,
  );
}

export interface RoleFilter extends UpdatedBetween {
  tenantId: number;
  code?: string | undefined;
  organizationId?: number | undefined;
  status?: number | undefined;
  isDepartmentHead?: boolean | undefined;
  q?: string | undefined;
}

/**
 * Endpoint 10: roles of one tenant, oldest first, including roles of soft-deleted organizations
 * (their `organizationCode` is null, as the spec says).
 */
export function findRoles(db: Db, filter: RoleFilter, paging: Paging) {
  const filtered = db
    .selectFrom('roles as r')
    .leftJoin('organizations as o', (join) =>
      join
        .onRef('o.id', '=', 'r.organization_id')
        .onRef('o.tenant_id', '=', 'r.tenant_id')
        .on('o.deleted_at', 'is', null),
    )
    .where('r.tenant_id', '=', filter.tenantId)
    .$if(filter.code !== undefined, (q) => q.where('r.code', '=', filter.code!))
    .$if(filter.organizationId !== undefined, (q) =>
      q.where('r.organization_id', '=', filter.organizationId!),
    )
    .$if(filter.status !== undefined, (q) => q.where('r.status', '=', filter.status!))
    .$if(filter.isDepartmentHead !== undefined, (q) =>
      q.where('r.is_department_head', '=', filter.isDepartmentHead ? 1 : 0),
    )
    .$if(filter.q !== undefined, (q) => q.where(searchMatches('r.search_key', filter.q!)))
    .$if(filter.updatedFrom !== undefined, (q) =>
      q.where('r.updated_at', '>=', filter.updatedFrom!),
    )
    .$if(filter.updatedTo !== undefined, (q) => q.where('r.updated_at', '<=', filter.updatedTo!));
  return paged(
    filtered,
    (q) =>
      q
        .select([
          'r.code',
          'r.name',
          'o.code as organizationCode',
          'r.is_department_head as isDepartmentHead',
          'r.status',
        ])
        .orderBy('r.id'),
    paging,
  );
}
