import { checkWebOrigin } from '@esign/shared';
import { type Db, inTransaction } from '../db/database';
import { DomainError } from '../errors/domainError';
import {
  deleteEmbeddingOrigin,
  insertEmbeddingOrigin,
  listEmbeddingOrigins,
  type TenantRow,
} from './queries';

function invalidOrigin(message: string): DomainError {
  return new DomainError('VALIDATION_ERROR', message, { field: 'origin' });
}

/**
 * An embedding domain as browsers send it in `Origin`, reduced by the rule the desktop agent
 * uses too (@esign/shared checkWebOrigin): scheme, host and a non-default port, lowercase, no
 * path; https only, except http for the loopback host during development.
 */
export function normalizeOrigin(raw: string): string {
  const checked = checkWebOrigin(raw.trim());
  if (!checked.ok) {
    throw invalidOrigin(
      `origin must be a bare origin like https://partner.example: ${checked.reason}`,
    );
  }
  return checked.origin;
}

/** Registers an embedding domain of a tenant; registering it again changes nothing. */
export async function addEmbeddingOrigin(
  db: Db,
  tenant: TenantRow,
  now: string,
  raw: string,
): Promise<{ origin: string; created: boolean }> {
  const origin = normalizeOrigin(raw);
  return inTransaction(db, async (trx) => ({
    origin,
    created: await insertEmbeddingOrigin(trx, tenant.id, origin, now),
  }));
}

/** Removes an embedding domain; true when it was registered. */
export async function removeEmbeddingOrigin(
  db: Db,
  tenant: TenantRow,
  raw: string,
): Promise<{ origin: string; removed: boolean }> {
  const origin = normalizeOrigin(raw);
  const removed = await inTransaction(db, (trx) => deleteEmbeddingOrigin(trx, tenant.id, origin));
  return { origin, removed };
}

/**
 * The origins allowed to embed a tenant's pages (`frame-ancestors`, and where a framed page may
 * post its messages): none for no tenant (a global operator) or a tenant without any.
 */
export async function embeddingOriginsOf(db: Db, tenantId: number | null): Promise<string[]> {
  if (tenantId === null) return [];
  return (await listEmbeddingOrigins(db, tenantId)).map((row) => row.origin);
}
