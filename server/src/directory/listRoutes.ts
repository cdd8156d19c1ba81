import { createRoute, type z } from '@hono/zod-openapi';
import type { AppDeps } from '../context';
import {
  createRouter,
  errorResponses,
  guardErrors,
  jsonContent,
  tenantCodeErrors,
} from '../http/openapi';
import type { Permission } from '../tenancy/permissionCatalog';
import type { TenantRow } from '../tenancy/resolveTenant';
import { listOrganizations, listRoles, listUsers } from './lists';
import { type DirectoryGuard, organizationCodeErrors, tenantOf } from './routeGuards';
import {
  OrganizationList,
  OrganizationQuery,
  RoleList,
  RoleQuery,
  UserList,
  UserQuery,
} from './schemas';

/** Directory endpoints 9–11: the tenant's organizations, roles and users, a page at a time. */
export function listRoutes(guarded: DirectoryGuard) {
  const router = createRouter();

  /** A query with `tenantCode`, one page of a list. */
  const addList = <
    Q extends z.ZodObject & z.ZodType<{ tenantCode?: string | undefined }>,
    L extends z.ZodType,
  >(
    operationId: string,
    permission: Permission,
    path: string,
    summary: string,
    query: Q,
    list: L,
    load: (deps: AppDeps, tenant: TenantRow, query: z.output<Q>) => Promise<z.output<L>>,
  ) => {
    const route = createRoute({
      ...guarded(operationId, permission),
      method: 'get',
      path,
      summary,
      request: { query },
      responses: {
        200: jsonContent(list, 'One page: items, page, pageSize, total'),
        ...errorResponses(
          guardErrors,
          ['VALIDATION_ERROR'],
          tenantCodeErrors,
          organizationCodeErrors,
        ),
      },
    });
    router.openapi(route, async (c) => {
      const filters = c.req.valid('query' as never) as z.output<Q>;
      const tenant = await tenantOf(c, filters.tenantCode);
      return c.json(await load(c.get('deps'), tenant, filters), 200);
    });
  };
  addList(
    'listOrganizations',
    'organization:view',
    '/organizations',
    'List organizations of the tenant',
    OrganizationQuery,
    OrganizationList,
    listOrganizations,
  );
  addList(
    'listRoles',
    'role:view',
    '/roles',
    'List roles of the tenant',
    RoleQuery,
    RoleList,
    listRoles,
  );
  addList(
    'listUsers',
    'user:view',
    '/users',
    'List users of the tenant',
    UserQuery,
    UserList,
    listUsers,
  );

  return router;
}
