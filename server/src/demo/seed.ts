import type { AppDeps } from './context';
import { inTransaction } from './db/database';
import { insertUser, replaceMemberships } from './directory/userRecords';
import { createTenant } from './tenancy/service';

export const demoTenant = {
  code: 'DEMO',
  name: 'Công ty Cổ phần Demo',
  adminUsername: 'demo.admin',
};

/**
 * On the first start with an empty database: a demo tenant with one administrator, so the
 * service can be tried at once. Returns the instructions to print, or null when data exists.
 */
export async function seedDemoTenant(deps: AppDeps): Promise<string | null> {
  const existing = await deps.db.selectFrom('tenants').select('id').limit(1).executeTakeFirst();
  if (existing) return null;
  const now = deps.clock.now().toISOString();
  const { tenant, root, adminRole } = await createTenant(deps.db, now, {
    code: demoTenant.code,
    name: demoTenant.name,
  });
  await inTransaction(deps.db, async (trx) => {
    const admin = await insertUser(
      trx,
      {
        tenantId: tenant.id,
        organizationId: root.id,
        code: 'DEMO-ADMIN',
        username: demoTenant.adminUsername,
        email: 'admin@demo.example',
        name: 'Quản trị viên Demo',
        status: 2,
        type: 'internal',
      },
      now,
    );
    await replaceMemberships(
      trx,
      admin.id,
      [{ organizationId: root.id, roleId: adminRole.id }],
      now,
    );
  });
  return [
    `Created demo tenant ${demoTenant.code} with administrator ${demoTenant.adminUsername}.`,
    'Get an API key for it (shown once):',
    `  npm run -s admin -- apikey create --tenant ${demoTenant.code} --org ${demoTenant.code} --user ${demoTenant.adminUsername}`,
  ].join('\n');
}
