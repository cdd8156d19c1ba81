import type { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { credentialAreas } from '../auth/areas';
import { authenticate } from '../auth/authenticate';
import { requirePermission } from '../auth/permissions';
import { type RateLimiter, rateLimit } from '../auth/rateLimit';
import type { AppEnv } from '../context';
import { limitBody } from '../http/bodyLimit';
import type { ErrorCodes } from '../http/openapi';
import type { Permission } from '../tenancy/permissionCatalog';
import { resolveTenant } from '../tenancy/resolveTenant';

/** What the directory's route files share: the guard of each endpoint, its tenant, its errors. */

export const jsonBody = <T extends z.ZodType>(schema: T) => ({
  required: true,
  content: { 'application/json': { schema } },
});

/** The tenant of a request: fixed by an organization key, named by `tenantCode` for a global key. */
export function tenantOf(c: Context<AppEnv>, tenantCode: string | undefined) {
  return resolveTenant(c.get('deps').db, c.get('principal'), tenantCode);
}

/** An organization code of the tenant (tenancy organizationByCode): filters and member rows. */
export const organizationCodeErrors: ErrorCodes = [
  'ORGANIZATION_CODE_AMBIGUOUS',
  'ORGANIZATION_CODE_NOT_FOUND',
];

/** The OpenAPI and middleware of a directory endpoint: `X-API-Key` only, then its permission. */
export type DirectoryGuard = ReturnType<typeof directoryGuard>;

export function directoryGuard(limiter: RateLimiter) {
  return (operationId: string, permission: Permission, bodyBytes?: number) => ({
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
}
