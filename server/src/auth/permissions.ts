import type { MiddlewareHandler } from 'hono';
import type { AppEnv, Principal } from '../context';
import { errors } from '../errors/domainError';
import type { Permission } from '../tenancy/permissionCatalog';
import { permissionsOfUser } from './queries';

/** A global key bound to nobody works the directory and nothing else. */
const unboundGlobalKeyPermissions: ReadonlySet<string> = new Set<Permission>([
  'organization:view',
  'role:view',
  'user:view',
  'user:manage',
]);

async function permissionsOf(
  deps: AppEnv['Variables']['deps'],
  principal: Principal,
): Promise<ReadonlySet<string>> {
  const actor = principal.actor;
  if (!actor) return unboundGlobalKeyPermissions;
  if (actor.isSuperAdmin) return new Set(['*']);
  const held = await deps.credentials.get(`permissions:${actor.id}`, () =>
    permissionsOfUser(deps.db, actor.id),
  );
  return held ?? new Set();
}

/** Whether the caller holds `permission` (directly or through `*`). */
export async function holdsPermission(
  deps: AppEnv['Variables']['deps'],
  principal: Principal,
  permission: Permission,
): Promise<boolean> {
  const held = await permissionsOf(deps, principal);
  return held.has('*') || held.has(permission);
}

/** 403 with the spec's body unless the caller holds `permission`. */
export function requirePermission(permission: Permission): MiddlewareHandler<AppEnv> {
  return requireAnyPermission([permission]);
}

/** 403 with the spec's body unless the caller holds one of `permissions`. */
export function requireAnyPermission(permissions: Permission[]): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const held = await permissionsOf(c.get('deps'), c.get('principal'));
    if (!held.has('*') && !permissions.some((permission) => held.has(permission))) {
      throw errors.forbidden();
    }
    await next();
  };
}
