import { isoNow } from '../../platform/clock';
import { allPermissions, isKnownPermission } from '../../tenancy/permissionCatalog';
import { tenantByCode } from '../../tenancy/resolveTenant';
import { createRole, defaultRoleCode } from '../../tenancy/service';
import { type Command, flagOptions, valueOptions } from '../command';

export const roleCommands: Command[] = [
  {
    name: 'role create',
    options: {
      ...valueOptions('tenant', 'org', 'name', 'code', 'permissions'),
      ...flagOptions('department-head'),
    },
    prepare: (args) => {
      const tenantCode = args.text('tenant');
      const permissions = args.list('permissions') ?? [];
      const unknown = permissions.filter((permission) => !isKnownPermission(permission));
      if (unknown.length > 0) {
        args.fail(
          `unknown permission(s) ${unknown.join(', ')}; known: * or ${allPermissions.join(', ')}`,
        );
      }
      const input = {
        organizationCode: args.text('org'),
        name: args.text('name'),
        code: args.optionalCode('code') ?? defaultRoleCode,
        permissions,
        isDepartmentHead: args.flag('department-head'),
      };
      return async (deps) => {
        const tenant = await tenantByCode(deps.db, tenantCode);
        const role = await createRole(deps.db, tenant, isoNow(deps.clock), input);
        const held = [...new Set(permissions)];
        return {
          json: {
            id: role.id,
            tenantCode: tenant.code,
            organizationCode: input.organizationCode,
            code: role.code,
            name: role.name,
            permissions: held,
            isDepartmentHead: role.is_department_head === 1,
          },
          lines: [
            `Created role "${role.name}" (code ${role.code}) in ${input.organizationCode} of tenant ${tenant.code}, id ${role.id}.`,
            `Permissions: ${held.length > 0 ? held.join(', ') : 'none'}${role.is_department_head ? '; department head' : ''}.`,
          ],
        };
      };
    },
  },
];
