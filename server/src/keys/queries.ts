import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../db/database';
import type { SigningKeysTable } from '../db/schema';

export type SigningKeyRow = Selectable<SigningKeysTable>;
export type SigningKeyListRow = SigningKeyRow & { tenant_code: string | null };

/** The new row, or undefined when the seal or this signer's key already exists (kept as is). */
export function insertSigningKey(
  db: Db,
  values: Insertable<SigningKeysTable>,
): Promise<SigningKeyRow | undefined> {
  return db
    .insertInto('signing_keys')
    .values(values)
    .onConflict((conflict) => conflict.doNothing())
    .returningAll()
    .executeTakeFirst();
}

export function findSealKey(db: Db): Promise<SigningKeyRow | undefined> {
  return db.selectFrom('signing_keys').selectAll().where('purpose', '=', 'seal').executeTakeFirst();
}

export function findSignerKey(
  db: Db,
  tenantId: number,
  emailKey: string,
): Promise<SigningKeyRow | undefined> {
  return db
    .selectFrom('signing_keys')
    .selectAll()
    .where('purpose', '=', 'signer')
    .where('tenant_id', '=', tenantId)
    .where('owner_email_key', '=', emailKey)
    .executeTakeFirst();
}

export function findSigningKey(db: Db, id: number): Promise<SigningKeyRow | undefined> {
  return db.selectFrom('signing_keys').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Signer keys, of one tenant or all, oldest first. */
export function listSignerKeys(db: Db, tenantId?: number): Promise<SigningKeyListRow[]> {
  let query = db
    .selectFrom('signing_keys')
    .leftJoin('tenants', 'tenants.id', 'signing_keys.tenant_id')
    .selectAll('signing_keys')
    .select('tenants.code as tenant_code')
    .where('signing_keys.purpose', '=', 'signer');
  if (tenantId !== undefined) query = query.where('signing_keys.tenant_id', '=', tenantId);
  return query.orderBy('signing_keys.id').execute();
}

/** The name of the tenant's user with this e-mail, for a signer certificate's CN. */
export async function userNameByEmail(
  db: Db,
  tenantId: number,
  emailKey: string,
): Promise<string | null> {
  const user = await db
    .selectFrom('users')
    .select('name')
    .where('tenant_id', '=', tenantId)
    .where('email_key', '=', emailKey)
    .orderBy('id')
    .executeTakeFirst();
  return user?.name ?? null;
}

export interface CertificateValues {
  der: Buffer;
  chainPem: string | null;
  source: 'development_ca' | 'imported';
  at: string;
}

/**
 * Records a certificate. A development certificate only fills an empty slot (two processes
 * issuing at once keep the first); an imported one replaces (renewal for the same key).
 */
export async function setCertificate(db: Db, id: number, values: CertificateValues): Promise<void> {
  let query = db
    .updateTable('signing_keys')
    .set({
      certificate_der: values.der,
      certificate_chain: values.chainPem,
      certificate_source: values.source,
      certificate_at: values.at,
    })
    .where('id', '=', id);
  if (values.source === 'development_ca') query = query.where('certificate_der', 'is', null);
  await query.execute();
}
