import { isoNow } from '../../platform/clock';
import { createTenant } from '../../tenancy/service';
import { type Command, valueOptions } from '../command';

export const tenantCommands: Command[] = [
  {
    name: 'tenant create',
    options: valueOptions('code', 'name'),
    prepare: (args) => {
      const input = { code: args.code('code'), name: args.text('name') };
      return async (deps) => {
        const { tenant, root, adminRole } = await createTenant(deps.db, isoNow(deps.clock), input);
        return {
          json: {
            id: tenant.id,
            code: tenant.code,
            name: tenant.name,
            rootOrganization: { code: root.code, name: root.name },
            adminRole: { name: adminRole.name },
          },
          lines: [
            `Created tenant ${tenant.code} (${tenant.name}), id ${tenant.id}.`,
            `Root organization ${root.code}; role "${adminRole.name}" holds every permission.`,
            'Next: create an administrator and give it that role, e.g.',
            `  admin user create --tenant ${tenant.code} --username U --email E --member ${root.code}:"${adminRole.name}"`,
          ],
        };
      };
    },
  },
];
