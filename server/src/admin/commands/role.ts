import { z } from 'zod';
import type { Db } from '../../db/database';
import { rolesOfOrganization } from '../../directory/queries/users';
import { isoNow } from '../../platform/clock';
import { allPermissions, isKnownPermission } from '../../tenancy/permissionCatalog';
import { type TenantRow, tenantByCode } from '../../tenancy/resolveTenant';
import { createRole, organizationByCode } from '../../tenancy/service';
import { type Command, command, option, standalone } from '../command';

/** Room left in a 64-character code for a `_<n>` suffix. */
const maxDerivedLength = 60;

/**
 * `Trưởng phòng kinh doanh` → `TRUONG_PHONG_KINH_DOANH`: the name's letters and digits with
 * Vietnamese diacritics folded (đ included), upper case, other characters as one `_`.
 */
export function roleCodeFromName(name: string): string {
  const folded = name
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    // Escaped (đ, Đ): an all-ASCII bundle is held by V8 at one byte a character, not two.
    .replace(/\u0111/g, 'd')
    .replace(/\u0110/g, 'D')
    .toUpperCase();
  const code = folded
    .replace(/[^A-Z0-9]+/g, '_')
    .slice(0, maxDerivedLength)
    .replace(/^_+|_+$/g, '');
  return code === '' ? 'ROLE' : code;
}

/**
 * Without --code, the code derived from the name, suffixed `_2`, `_3`... when a role of the
 * organization has it already: members name roles by code within their organization, so a
 * second `DEFAULT` (the administrator role's code) would make those lookups ambiguous.
 */
async function unusedRoleCode(db: Db, tenant: TenantRow, organizationCode: string, name: string) {
  const organization = await organizationByCode(db, tenant.id, organizationCode);
  const base = roleCodeFromName(name);
  for (let attempt = 1; ; attempt += 1) {
    const candidate = attempt === 1 ? base : `${base}_${attempt}`;
    if ((await rolesOfOrganization(db, organization.id, 'code', candidate)).length === 0) {
      return candidate;
    }
  }
}

/** `--permissions a:b,c:d|*`: every entry a known permission. */
const permissionList = option.list.optional().superRefine((permissions, context) => {
  const unknown = (permissions ?? []).filter((permission) => !isKnownPermission(permission));
  if (unknown.length > 0) {
    context.addIssue({
      code: 'custom',
      message: `unknown permission(s) ${unknown.join(', ')}; known: * or ${allPermissions.join(', ')}`,
      input: permissions,
      params: standalone,
    });
  }
});

export const roleCommands: Command[] = [
  command({
    name: 'role create',
    options: z.object({
      tenant: option.text,
      org: option.text,
      name: option.text,
      code: option.code.optional(),
      permissions: permissionList,
      'department-head': option.flag,
    }),
    prepare: (options) => {
      const permissions = options.permissions ?? [];
      return async (deps) => {
        const tenant = await tenantByCode(deps.db, options.tenant);
        const input = {
          organizationCode: options.org,
          name: options.name,
          code: options.code ?? (await unusedRoleCode(deps.db, tenant, options.org, options.name)),
          permissions,
          isDepartmentHead: options['department-head'],
        };
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
  }),
];
