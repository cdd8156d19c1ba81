import { type Db, inTransaction } from '../db/database';
import { ApiError } from '../errors/apiError';
import type { TenantRow } from './resolveTenant';

const loopbackHosts = new Set(['localhost', '127.0.0.1', '[::1]']);

function invalidOrigin(message: string): ApiError {
  return new ApiError(400, 'VALIDATION_ERROR', message, { field: 'origin' });
}

/**
 * An embedding domain as browsers send it in `Origin`: scheme, host and a non-default port,
 * lowercase, no path. https only, except http for the loopback host during development.
 */
export function normalizeOrigin(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw invalidOrigin(`origin is not a URL: "${raw}"`);
  }
  if (url.username || url.password || url.search || url.hash || url.pathname !== '/') {
    throw invalidOrigin(`origin must be a bare origin like https://partner.example, got "${raw}"`);
  }
  const secure = url.protocol === 'https:';
  const loopback = url.protocol === 'http:' && loopbackHosts.has(url.hostname);
  if (!secure && !loopback) {
    throw invalidOrigin(`origin must use https (http only for localhost), got "${raw}"`);
  }
  return url.origin;
}

export interface EmbeddingOriginView {
  tenantCode: string;
  origin: string;
  createdAt: string;
}

/** Registers an embedding domain of a tenant; registering it again changes nothing. */
export async function addEmbeddingOrigin(
  db: Db,
  tenant: TenantRow,
  now: string,
  raw: string,
): Promise<{ origin: string; created: boolean }> {
  const origin = normalizeOrigin(raw);
  return inTransaction(db, async (trx) => {
    const inserted = await trx
      .insertInto('embedding_origins')
      .values({ tenant_id: tenant.id, origin, created_at: now })
      .onConflict((conflict) => conflict.columns(['tenant_id', 'origin']).doNothing())
      .executeTakeFirst();
    return { origin, created: Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0 };
  });
}

/** Removes an embedding domain; true when it was registered. */
export async function removeEmbeddingOrigin(
  db: Db,
  tenant: TenantRow,
  raw: string,
): Promise<{ origin: string; removed: boolean }> {
  const origin = normalizeOrigin(raw);
  const result = await inTransaction(db, (trx) =>
    trx
      .deleteFrom('embedding_origins')
      .where('tenant_id', '=', tenant.id)
      .where('origin', '=', origin)
      .executeTakeFirst(),
  );
  return { origin, removed: Number(result.numDeletedRows) > 0 };
}

/** Registered embedding domains, optionally of one tenant. */
export function listEmbeddingOrigins(db: Db, tenantId?: number): Promise<EmbeddingOriginView[]> {
  let query = db
    .selectFrom('embedding_origins')
    .innerJoin('tenants', 'tenants.id', 'embedding_origins.tenant_id')
    .select([
      'tenants.code as tenantCode',
      'embedding_origins.origin as origin',
      'embedding_origins.created_at as createdAt',
    ])
    .orderBy('tenants.code')
    .orderBy('embedding_origins.origin');
  if (tenantId !== undefined) query = query.where('embedding_origins.tenant_id', '=', tenantId);
  return query.execute();
}
