import { z } from 'zod';
import type { AppDeps } from '../../context';
import { isoNow } from '../../platform/clock';
import {
  addEmbeddingOrigin,
  normalizeOrigin,
  removeEmbeddingOrigin,
} from '../../tenancy/embeddingOrigins';
import { listEmbeddingOrigins } from '../../tenancy/queries';
import { type TenantRow, tenantByCode } from '../../tenancy/resolveTenant';
import { type Command, checked, command, listCommand, option } from '../command';

/** `domain add|remove --tenant T --origin O`: one change of a tenant's embedding origins. */
function originCommand(
  name: string,
  change: (deps: AppDeps, tenant: TenantRow, origin: string) => Promise<boolean>,
  message: (changed: boolean, origin: string, tenantCode: string) => string,
): Command {
  return command({
    name,
    options: z.object({ tenant: option.text, origin: checked(option.text, normalizeOrigin) }),
    prepare: ({ tenant: tenantCode, origin }) => {
      return async (deps) => {
        const tenant = await tenantByCode(deps.db, tenantCode);
        const changed = await change(deps, tenant, origin);
        return {
          json: { tenantCode: tenant.code, origin, changed },
          lines: [message(changed, origin, tenant.code)],
        };
      };
    },
  });
}

export const domainCommands: Command[] = [
  originCommand(
    'domain add',
    async (deps, tenant, origin) =>
      (await addEmbeddingOrigin(deps.db, tenant, isoNow(deps.clock), origin)).created,
    (added, origin, tenantCode) =>
      added
        ? `Registered embedding origin ${origin} for tenant ${tenantCode}.`
        : `${origin} was already registered for tenant ${tenantCode}; nothing changed.`,
  ),
  originCommand(
    'domain remove',
    async (deps, tenant, origin) => (await removeEmbeddingOrigin(deps.db, tenant, origin)).removed,
    (removed, origin, tenantCode) =>
      removed
        ? `Removed embedding origin ${origin} of tenant ${tenantCode}.`
        : `${origin} was not registered for tenant ${tenantCode}; nothing changed.`,
  ),
  listCommand({
    name: 'domain list',
    key: 'origins',
    header: ['TENANT', 'ORIGIN', 'ADDED'],
    list: listEmbeddingOrigins,
    row: (o) => [o.tenantCode, o.origin, o.createdAt],
  }),
];
