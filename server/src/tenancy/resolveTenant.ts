import type { Principal } from '../context';
import type { Db } from '../db/database';
import { DomainError } from '../errors/domainError';
import { findTenantsByCode, type TenantRow, tenantById } from './queries';

export type { TenantRow };

/** One tenant by its code, with the spec's NOT_FOUND and AMBIGUOUS errors (legacy codes repeat). */
export async function tenantByCode(db: Db, code: string): Promise<TenantRow> {
  const matches = await findTenantsByCode(db, code);
  if (matches.length === 0) {
    throw new DomainError('TENANT_CODE_NOT_FOUND', `No tenant with code ${code}`, {
      field: 'tenantCode',
    });
  }
  if (matches.length > 1) {
    throw new DomainError(
      'TENANT_CODE_AMBIGUOUS',
      `Tenant code ${code} is shared by several organizations`,
      {
        field: 'tenantCode',
      },
    );
  }
  return matches[0]!;
}

function mismatch(code: string): DomainError {
  return new DomainError('TENANT_CODE_MISMATCH', `tenantCode ${code} does not match the API key`, {
    field: 'tenantCode',
  });
}

/**
 * The tenant a request works in. An organization key fixes it and `tenantCode`, when sent, must
 * name it. A global key needs `tenantCode`; when the key is bound to a tenant user, only that
 * user's tenant matches.
 */
export async function resolveTenant(
  db: Db,
  principal: Principal,
  tenantCode: string | undefined,
): Promise<TenantRow> {
  const fixedTenantId =
    principal.kind === 'apiKey' && principal.keyKind === 'organization'
      ? principal.tenantId
      : principal.actor && !principal.actor.isSuperAdmin
        ? principal.actor.tenantId
        : null;
  const isGlobalKey = principal.kind === 'apiKey' && principal.keyKind === 'global';
  if (isGlobalKey && !tenantCode) {
    throw new DomainError('TENANT_CODE_REQUIRED', 'tenantCode is required with a global API key', {
      field: 'tenantCode',
    });
  }
  if (!isGlobalKey && fixedTenantId !== null) {
    const tenant = await tenantById(db, fixedTenantId);
    if (tenantCode !== undefined && tenantCode !== tenant.code) throw mismatch(tenantCode);
    return tenant;
  }
  if (!tenantCode) {
    throw new DomainError('TENANT_CODE_REQUIRED', 'tenantCode is required', {
      field: 'tenantCode',
    });
  }
  const tenant = await tenantByCode(db, tenantCode);
  if (fixedTenantId !== null && tenant.id !== fixedTenantId) throw mismatch(tenantCode);
  return tenant;
}
