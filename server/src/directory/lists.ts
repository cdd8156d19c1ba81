import { identityKey } from '../auth/queries';
import type { AppDeps } from '../context';
import type { Db } from '../db/database';
import type { TenantRow } from '../tenancy/resolveTenant';
import { organizationByCode } from '../tenancy/service';
import { findOrganizations, findRoles } from './queries/organizations';
import type { Paging } from './queries/search';
import { findUsers } from './queries/users';
import {
  directoryPageSize,
  type OrganizationItem,
  type OrganizationQueryInput,
  type RoleItem,
  type RoleQueryInput,
  type UserQueryInput,
  type UserView,
} from './schemas';
import { toViews } from './service';

/** One page of a directory list: `items`, `page`, `pageSize`, `total` (all matches). */
export interface DirectoryList<T> extends Paging {
  items: T[];
  total: number;
}

type ListQuery<T> = Omit<T, 'tenantCode'>;

/** One page: counts every match, reads the page, shapes its rows. */
async function listPage<Row, Item>(
  query: { page?: number | undefined; pageSize?: number | undefined },
  find: (paging: Paging) => Promise<{ total: number; rows: Row[] }>,
  toItems: (rows: Row[]) => Item[] | Promise<Item[]>,
): Promise<DirectoryList<Item>> {
  const paging = { page: query.page ?? 1, pageSize: query.pageSize ?? directoryPageSize.default };
  const { total, rows } = await find(paging);
  return { items: await toItems(rows), ...paging, total };
}

/** An organization filter (`parentCode`, `organizationCode`) must name one organization. */
async function organizationIdOf(
  db: Db,
  tenant: TenantRow,
  code: string | undefined,
  field = 'organizationCode',
): Promise<number | undefined> {
  return code === undefined ? undefined : (await organizationByCode(db, tenant.id, code, field)).id;
}

/** Endpoint 9. */
export async function listOrganizations(
  deps: AppDeps,
  tenant: TenantRow,
  query: ListQuery<OrganizationQueryInput>,
): Promise<DirectoryList<OrganizationItem>> {
  const parentId = await organizationIdOf(deps.db, tenant, query.parentCode, 'parentCode');
  const filter = { ...query, tenantId: tenant.id, parentId };
  return listPage(
    query,
    (paging) => findOrganizations(deps.db, filter, paging),
    (rows) => rows,
  );
}

/** Endpoint 10. */
export async function listRoles(
  deps: AppDeps,
  tenant: TenantRow,
  query: ListQuery<RoleQueryInput>,
): Promise<DirectoryList<RoleItem>> {
  const organizationId = await organizationIdOf(deps.db, tenant, query.organizationCode);
  const filter = { ...query, tenantId: tenant.id, organizationId };
  return listPage(
    query,
    (paging) => findRoles(deps.db, filter, paging),
    (rows) => rows.map((row) => ({ ...row, isDepartmentHead: row.isDepartmentHead === 1 })),
  );
}

/** Endpoint 11: login name and e-mail match exactly but in any letter case, like login. */
export async function listUsers(
  deps: AppDeps,
  tenant: TenantRow,
  query: ListQuery<UserQueryInput>,
): Promise<DirectoryList<UserView>> {
  const organizationId = await organizationIdOf(deps.db, tenant, query.organizationCode);
  const filter = {
    ...query,
    tenantId: tenant.id,
    organizationId,
    usernameKey: query.username === undefined ? undefined : identityKey(query.username),
    emailKey: query.email === undefined ? undefined : identityKey(query.email),
  };
  return listPage(
    query,
    (paging) => findUsers(deps.db, filter, paging),
    (rows) => toViews(deps.db, rows),
  );
}
