import { createRoute } from '@hono/zod-openapi';
import {
  createRouter,
  type ErrorCodes,
  errorResponses,
  guardErrors,
  jsonBodyErrors,
  jsonContent,
  tenantCodeErrors,
} from '../http/openapi';
import { type DirectoryGuard, jsonBody, organizationCodeErrors, tenantOf } from './routeGuards';
import {
  BulkResultSchema,
  TenantQuery,
  UserBulkBody,
  UserCodeParam,
  UserCreateBody,
  UserSchema,
  UserStatusBody,
  UserUpdateBody,
} from './schemas';
import { bulkUpsertUsers, createUser, getUser, setUserStatus, updateUser } from './service';

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

/** Directory endpoints 12–16: one user read, created, updated, locked or upserted in bulk. */
export function userRoutes(guarded: DirectoryGuard) {
  const router = createRouter();

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
