import { z } from 'zod';
import { isoNow } from '../../platform/clock';
import { tenantByCode } from '../../tenancy/resolveTenant';
import { createOrganization } from '../../tenancy/service';
import { type Command, command, option } from '../command';

export const orgCommands: Command[] = [
  command({
    name: 'org create',
    options: z.object({
      tenant: option.text,
      code: option.code,
      name: option.text,
      parent: option.text.optional(),
    }),
    prepare: ({ tenant: tenantCode, code, name, parent }) => {
      const input = { code, name, parentCode: parent };
      return async (deps) => {
        const tenant = await tenantByCode(deps.db, tenantCode);
        const parentCode = input.parentCode ?? tenant.code;
        const organization = await createOrganization(deps.db, tenant, isoNow(deps.clock), {
          ...input,
          parentCode,
        });
        return {
          json: {
            id: organization.id,
            tenantCode: tenant.code,
            code: organization.code,
            name: organization.name,
            parentCode,
          },
          lines: [
            `Created organization ${organization.code} (${organization.name}) under ${parentCode} in tenant ${tenant.code}, id ${organization.id}.`,
          ],
        };
      };
    },
  }),
];
