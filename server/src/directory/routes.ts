import { createRoute, type z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { credentialAreas } from '../auth/areas';
import { authenticate } from '../auth/authenticate';
import { requirePermission } from '../auth/permissions';
import { type RateLimiter, rateLimit } from '../auth/rateLimit';
import type { AppDeps, AppEnv } from '../context';
import { limitBody } from '../http/bodyLimit';
import {
  createRouter,
  type ErrorCodes,
  errorResponses,
  guardErrors,
  jsonBodyErrors,
  jsonContent,
  tenantCodeErrors,
} from '../http/openapi';
import type { Permission } from '../tenancy/permissionCatalog';
import { resolveTenant, type TenantRow } from '../tenancy/resolveTenant';
import { listOrganizations, listRoles, listUsers } from './lists';
import {
  BulkResultSchema,
  DirectoryUserRow,
  OrganizationList,
  OrganizationQuery,
  RoleList,
  RoleQuery,
  TenantQuery,
  UserBulkBody,
  UserCodeParam,
  UserCreateBody,
  UserList,
  UserQuery,
  UserSchema,
  UserStatusBody,
  UserUpdateBody,
} from './schemas';
import { bulkUpsertUsers, createUser, getUser, setUserStatus, updateUser } from './service';

const jsonBody = <T extends z.ZodType>(schema: T) => ({
  required: true,
  content: { 'application/json': { schema } },
});

/** The tenant of a request: fixed by an organization key, named by `tenantCode` for a global key. */
function tenantOf(c: Context<AppEnv>, tenantCode: string | undefined) {
  return resolveTenant(c.get('deps').db, c.get('principal'), tenantCode);
}

/** An organization code of the tenant (tenancy organizationByCode): filters and member rows. */
const organizationCodeErrors: ErrorCodes = [
  'ORGANIZATION_CODE_AMBIGUOUS',
  'ORGANIZATION_CODE_NOT_FOUND',
];

/** The user named by the path's `code`. */
const userCodeErrors: ErrorCodes = ['USER_CODE_AMBIGUOUS', 'USER_CODE_NOT_FOUND'];

/** `members[]` rows of a write (directory/members), besides their organization codes. */
const memberErrors: ErrorCodes = [
  'MEMBER_ROLE_REQUIRED',
  'MEMBER_ROLE_MISMATCH',
  'ROLE_AMBIGUOUS_IN_ORGANIZATION',
  'ROLE_NOT_FOUND_IN_ORGANIZATION',
  'MEMBER_ORGANIZATION_DUPLICATED',
];

/** Bodies above the default (http/bodyLimit): 50 member rows, 200 user rows. */
const directoryBodyLimits = {
  user: 256 * 1024,
  bulk: 4 * 1024 * 1024,
} as const;

/** Directory endpoints 9–16 of the integration API: `X-API-Key` only, bare JSON bodies. */
export function directoryRoutes(limiter: RateLimiter) {
  const router = createRouter();
  router.openAPIRegistry.register('DirectoryUserRow', DirectoryUserRow);

  const guarded = (operationId: string, permission: Permission, bodyBytes?: number) => ({
    operationId,
    tags: ['Directory'],
    security: [{ ApiKey: [] }],
    middleware: [
      authenticate(credentialAreas.directory),
      rateLimit(limiter, 'api'),
      requirePermission(permission),
      ...(bodyBytes === undefined ? [] : [limitBody(bodyBytes)]),
    ],
  });

  /** Endpoints 9–11: a query with `tenantCode`, one page of a list. */
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

  const userRoute = createRoute({
    ...guarded('getUserByCode', 'user:view'),
    method: 'get',
    path: '/users/{code}',
    summary: 'One user by code',
    request: { params: UserCodeParam, query: TenantQuery },
    responses: {
      200: jsonContent(UserSchema, 'The user'),
      ...errorResponses(guardErrors, ['VALIDATION_ERROR'], tenantCodeErrors, userCodeErrors),
    },
  });
  router.openapi(userRoute, async (c) => {
    const tenant = await tenantOf(c, c.req.valid('query').tenantCode);
    return c.json(await getUser(c.get('deps'), tenant, c.req.valid('param').code), 200);
  });

  const createUserRoute = createRoute({
    ...guarded('createUser', 'user:manage', directoryBodyLimits.user),
    method: 'post',
    path: '/users',
    summary: 'Create an internal user at the tenant root, awaiting password setup',
    request: { body: jsonBody(UserCreateBody) },
    responses: {
      201: jsonContent(UserSchema, 'The created user (status 1)'),
      ...errorResponses(
        guardErrors,
        jsonBodyErrors,
        tenantCodeErrors,
        organizationCodeErrors,
        memberErrors,
        ['USER_CODE_ALREADY_EXISTS', 'USERNAME_ALREADY_EXISTS', 'EMAIL_ALREADY_EXISTS'],
      ),
    },
  });
  router.openapi(createUserRoute, async (c) => {
    const { tenantCode, ...input } = c.req.valid('json');
    const tenant = await tenantOf(c, tenantCode);
    return c.json(await createUser(c.get('deps'), tenant, input), 201);
  });

  const updateUserRoute = createRoute({
    ...guarded('updateUser', 'user:manage', directoryBodyLimits.user),
    method: 'put',
    path: '/users/{code}',
    summary: 'Partial update of a user (e-mail and login name are fixed)',
    request: { params: UserCodeParam, body: jsonBody(UserUpdateBody) },
    responses: {
      200: jsonContent(UserSchema, 'The user after the update'),
      ...errorResponses(
        guardErrors,
        jsonBodyErrors,
        tenantCodeErrors,
        userCodeErrors,
        organizationCodeErrors,
        memberErrors,
        ['IDENTITY_IMMUTABLE'],
      ),
    },
  });
  router.openapi(updateUserRoute, async (c) => {
    const { tenantCode, ...patch } = c.req.valid('json');
    const tenant = await tenantOf(c, tenantCode);
    return c.json(await updateUser(c.get('deps'), tenant, c.req.valid('param').code, patch), 200);
  });

  const statusRoute = createRoute({
    ...guarded('setUserStatus', 'user:manage'),
    method: 'put',
    path: '/users/{code}/status',
    summary: 'Activate (2) or lock (3) a user',
    request: { params: UserCodeParam, body: jsonBody(UserStatusBody) },
    responses: {
      200: jsonContent(UserSchema, 'The user with its new status'),
      ...errorResponses(guardErrors, jsonBodyErrors, tenantCodeErrors, userCodeErrors),
    },
  });
  router.openapi(statusRoute, async (c) => {
    const { tenantCode, status } = c.req.valid('json');
    const tenant = await tenantOf(c, tenantCode);
    const code = c.req.valid('param').code;
    return c.json(await setUserStatus(c.get('deps'), tenant, code, status), 200);
  });

  const bulkRoute = createRoute({
    ...guarded('bulkUpsertUsers', 'user:manage', directoryBodyLimits.bulk),
    method: 'post',
    path: '/users/bulk',
    summary: 'Upsert up to 200 users by code, each row in its own transaction',
    request: { body: jsonBody(UserBulkBody) },
    responses: {
      200: jsonContent(BulkResultSchema, 'Per-row results; failed rows undo nothing else'),
      ...errorResponses(guardErrors, jsonBodyErrors, tenantCodeErrors, [
        'USER_CODE_DUPLICATED_IN_PAYLOAD',
      ]),
    },
  });
  router.openapi(bulkRoute, async (c) => {
    const { tenantCode, users } = c.req.valid('json');
    const tenant = await tenantOf(c, tenantCode);
    return c.json(await bulkUpsertUsers(c.get('deps'), tenant, users), 200);
  });

  return router;
}
