import type { Db } from '../db/database';

/** Whether the database holds a tenant yet: a service with none can serve no request. */
export async function hasAnyTenant(db: Db): Promise<boolean> {
  const tenant = await db.selectFrom('tenants').select('id').limit(1).executeTakeFirst();
  return tenant !== undefined;
}
