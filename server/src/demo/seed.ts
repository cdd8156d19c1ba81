import type { AppDeps } from '../context';
import { inTransaction } from '../db/database';
import { insertUser, replaceMemberships } from '../directory/userRecords';
import { adminRoleName, createTenant } from '../tenancy/service';
import { hasAnyTenant } from './queries';

export const demoTenant = {
  code: 'DEMO',
  name: 'Công ty Cổ phần Demo',
  adminUsername: 'demo.admin',
};

/** What a start with no tenant prints: the operator CLI commands, with placeholders, no secret. */
export const firstTenantInstructions = [
  'No tenant yet. Create the first one with the operator CLI (same DATA_DIR and APP_ENV as the server):',
  '  npm run -s admin -- tenant create --code <TENANT> --name "<Tenant name>"',
  `  npm run -s admin -- user create --tenant <TENANT> --username <USERNAME> --email <EMAIL> --member <TENANT>:"${adminRoleName}"`,
  '  npm run -s admin -- apikey create --tenant <TENANT> --org <TENANT> --user <USERNAME>',
  'The last command prints the API key once. See: npm run -s admin -- help',
].join('\n');

/**
 * What the start prepares and says before listening. Development on a new DATA_DIR (no database
 * file before this start) gets the demo tenant, so the service can be tried at once; production
 * and sandbox never do: their tenants are the operator's. A start that finds no tenant says how
 * to create one. Returns the text to print, or null.
 */
export async function prepareTenants(
  deps: AppDeps,
  start: { newDatabase: boolean },
): Promise<string | null> {
  if (deps.config.environment === 'development' && start.newDatabase) {
    return seedDemoTenant(deps);
  }
  return (await hasAnyTenant(deps.db)) ? null : firstTenantInstructions;
}

/** The demo tenant with one administrator; returns the instructions to print (no secret). */
async function seedDemoTenant(deps: AppDeps): Promise<string> {
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
    `Created demo tenant ${demoTenant.code} with administrator ${demoTenant.adminUsername} (development only).`,
    'Get an API key for it (shown once):',
    `  npm run -s admin -- apikey create --tenant ${demoTenant.code} --org ${demoTenant.code} --user ${demoTenant.adminUsername}`,
  ].join('\n');
}
