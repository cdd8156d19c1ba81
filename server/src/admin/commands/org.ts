import { isoNow } from '../../platform/clock';
import { tenantByCode } from '../../tenancy/resolveTenant';
import { createOrganization } from '../../tenancy/service';
import { type Command, valueOptions } from '../command';

export const orgCommands: Command[] = [
  {
    name: 'org create',
    options: valueOptions('tenant', 'code', 'name', 'parent'),
    prepare: (args) => {
      const tenantCode = args.text('tenant');
      const input = {
        code: args.code('code'),
        name: args.text('name'),
        parentCode: args.optionalText('parent'),
      };
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
  },
];
