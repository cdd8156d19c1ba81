import type { Db } from '../db/database';
import { DomainError } from '../errors/domainError';
import { type OrganizationRow, organizationByCode } from '../tenancy/service';
import { rolesOfOrganization } from './queries/users';
import type { MemberInput } from './schemas';

/** One role in one organization, ready to be written as a membership. */
export interface ResolvedMember {
  organizationId: number;
  roleId: number;
}

/** `roleCode` / `roleName` as sent; an empty value counts as absent. */
function present(value: string | null | undefined): string | undefined {
  return value ? value : undefined;
}

/**
 * The role a member row names. `roleName` is preferred (unique in an organization); `roleCode`
 * alone must match exactly one role (most roles share the default code). When both are sent
 * they must name the same role, otherwise the row is refused with MEMBER_ROLE_MISMATCH.
 */
async function roleOfRow(
  db: Db,
  organization: OrganizationRow,
  row: MemberInput,
  at: string,
): Promise<number> {
  const roleCode = present(row.roleCode);
  const roleName = present(row.roleName);
  const by = roleName !== undefined ? 'name' : 'code';
  const field = `${at}.${roleName !== undefined ? 'roleName' : 'roleCode'}`;
  const named = await rolesOfOrganization(db, organization.id, by, (roleName ?? roleCode)!);
  if (named.length === 0) {
    throw new DomainError(
      'ROLE_NOT_FOUND_IN_ORGANIZATION',
      `No role ${roleName ?? roleCode} in organization ${organization.code}`,
      { field },
    );
  }
  const matches =
    roleName !== undefined && roleCode !== undefined
      ? named.filter((role) => role.code === roleCode)
      : named;
  if (matches.length === 0) {
    throw new DomainError(
      'MEMBER_ROLE_MISMATCH',
      `roleCode ${roleCode} and roleName ${roleName} name different roles in ${organization.code}`,
      { field: `${at}.roleCode` },
    );
  }
  if (matches.length > 1) {
    throw new DomainError(
      'ROLE_AMBIGUOUS_IN_ORGANIZATION',
      `Several roles of ${organization.code} match ${roleName ?? roleCode}; use roleName`,
      { field },
    );
  }
  return matches[0]!.id;
}

/**
 * Resolves member rows in their order, failing on the first bad row with `details.field`
 * pointing into `members`. One role per organization: an organization named twice is a 409.
 */
export async function resolveMembers(
  db: Db,
  tenantId: number,
  rows: MemberInput[],
): Promise<ResolvedMember[]> {
  const resolved: ResolvedMember[] = [];
  for (const [index, row] of rows.entries()) {
    const at = `members.${index}`;
    if (present(row.roleCode) === undefined && present(row.roleName) === undefined) {
      throw new DomainError('MEMBER_ROLE_REQUIRED', 'Send roleName (or roleCode) in each member', {
        field: `${at}.roleName`,
      });
    }
    const organization = await organizationByCode(
      db,
      tenantId,
      row.organizationCode,
      `${at}.organizationCode`,
    );
    if (resolved.some((member) => member.organizationId === organization.id)) {
      throw new DomainError(
        'MEMBER_ORGANIZATION_DUPLICATED',
        `Organization ${organization.code} appears twice in members: one role per organization`,
        { field: `${at}.organizationCode` },
      );
    }
    resolved.push({
      organizationId: organization.id,
      roleId: await roleOfRow(db, organization, row, at),
    });
  }
  return resolved;
}

/** Whether two sets of memberships are the same, ignoring order. */
export function sameMembers(current: ResolvedMember[], next: ResolvedMember[]): boolean {
  const key = (member: ResolvedMember) => `${member.organizationId}:${member.roleId}`;
  const currentKeys = new Set(current.map(key));
  return current.length === next.length && next.every((member) => currentKeys.has(key(member)));
}
