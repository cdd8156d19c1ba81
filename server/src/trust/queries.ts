import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../db/database';
import type { TrustAnchorsTable } from '../db/schema';

export type TrustAnchorRow = Selectable<TrustAnchorsTable>;

/** The global anchors and, with a tenant, that tenant's own. */
export function trustAnchorRows(db: Db, tenantId: number | null): Promise<TrustAnchorRow[]> {
  let query = db.selectFrom('trust_anchors').selectAll();
  query =
    tenantId === null
      ? query.where('tenant_id', 'is', null)
      : query.where((eb) => eb.or([eb('tenant_id', 'is', null), eb('tenant_id', '=', tenantId)]));
  return query.orderBy('id').execute();
}

/** Every anchor, or the global ones and one tenant's, with the tenant code, for the CLI. */
export function listTrustAnchorRows(
  db: Db,
  tenantId?: number,
): Promise<(TrustAnchorRow & { tenant_code: string | null })[]> {
  let query = db
    .selectFrom('trust_anchors')
    .leftJoin('tenants', 'tenants.id', 'trust_anchors.tenant_id')
    .selectAll('trust_anchors')
    .select('tenants.code as tenant_code');
  if (tenantId !== undefined) {
    query = query.where((eb) =>
      eb.or([
        eb('trust_anchors.tenant_id', 'is', null),
        eb('trust_anchors.tenant_id', '=', tenantId),
      ]),
    );
  }
  return query.orderBy('trust_anchors.id').execute();
}

export function findTrustAnchor(
  db: Db,
  tenantId: number | null,
  fingerprint: string,
): Promise<TrustAnchorRow | undefined> {
  return db
    .selectFrom('trust_anchors')
    .selectAll()
    .where('tenant_id', tenantId === null ? 'is' : '=', tenantId)
    .where('fingerprint', '=', fingerprint)
    .executeTakeFirst();
}

export function insertTrustAnchor(
  db: Db,
  values: Insertable<TrustAnchorsTable>,
): Promise<TrustAnchorRow> {
  return db.insertInto('trust_anchors').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function deleteTrustAnchor(db: Db, id: number): Promise<TrustAnchorRow | undefined> {
  return db.deleteFrom('trust_anchors').where('id', '=', id).returningAll().executeTakeFirst();
}
