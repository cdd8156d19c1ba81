import { decryptSecret } from '../../src/platform/secrets';
import { createHarness, type Harness, readJson } from '../support/harness';
import { runCli } from './runCli';

jest.setTimeout(120_000);

describe('admin tenant, org, role, webhook and domain commands', () => {
  let h: Harness;
  const cli = (command: string) => runCli(h.dataDir, command);
  beforeAll(() => {
    h = createHarness();
  });
  afterAll(() => h.close());

  it('tenant developer: the sandbox developer account is set, checked, and read back from SQLite', async () => {
    const created = await cli(
      'tenant create --code DEVT --name "Dev tenant" --developer-email dev@devt.example --json',
    );
    expect(created.code).toBe(0);
    expect(created.json()).toMatchObject({
      developerEmail: 'dev@devt.example',
      developerPhone: null,
    });
    const updated = await cli('tenant developer --tenant DEVT --phone "+84 912 345 678" --json');
    expect(updated.json()).toEqual({
      code: 'DEVT',
      developerEmail: 'dev@devt.example',
      developerPhone: '+84 912 345 678',
    });
    const bad = await cli('tenant developer --tenant DEVT --email not-an-address');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('developerEmail');
    const row = await h.deps.db
      .selectFrom('tenants')
      .select(['developer_email', 'developer_phone'])
      .where('code', '=', 'DEVT')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      developer_email: 'dev@devt.example',
      developer_phone: '+84 912 345 678',
    });
  });

  it('tenant create: a root organization with the tenant code and the role "Quản trị" holding every permission', async () => {
    const result = await cli('tenant create --code ACME --name "Công ty Acme" --json');
    expect(result.code).toBe(0);
    const tenant = result.json<{ id: number }>();
    expect(tenant).toEqual({
      id: tenant.id,
      code: 'ACME',
      name: 'Công ty Acme',
      developerEmail: null,
      developerPhone: null,
      rootOrganization: { code: 'ACME', name: 'Công ty Acme' },
      adminRole: { name: 'Quản trị' },
    });
    const role = await h.deps.db
      .selectFrom('roles')
      .innerJoin('role_permissions', 'role_permissions.role_id', 'roles.id')
      .select(['roles.name', 'role_permissions.permission'])
      .where('roles.tenant_id', '=', tenant.id)
      .execute();
    expect(role).toEqual([{ name: 'Quản trị', permission: '*' }]);

    const again = await cli('tenant create --code ACME --name Again');
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('admin: TENANT_CODE_ALREADY_EXISTS: Tenant ACME already exists\n');
  });

  it('org create: under the root by default, under --parent when given', async () => {
    const sales = await cli('org create --tenant ACME --code SALES --name Sales --json');
    expect(sales.code).toBe(0);
    expect(sales.json()).toMatchObject({ tenantCode: 'ACME', code: 'SALES', parentCode: 'ACME' });
    const north = await cli(
      'org create --tenant ACME --code SALES-N --name "Sales North" --parent SALES',
    );
    expect(north.code).toBe(0);
    expect(north.stdout).toMatch(
      /^Created organization SALES-N \(Sales North\) under SALES in tenant ACME/,
    );
    const rows = await h.deps.db
      .selectFrom('organizations as child')
      .innerJoin('organizations as parent', 'parent.id', 'child.parent_id')
      .select(['child.code as child', 'parent.code as parent'])
      .orderBy('child.id')
      .execute();
    expect(rows).toEqual([
      { child: 'SALES', parent: 'ACME' },
      { child: 'SALES-N', parent: 'SALES' },
    ]);
    const clash = await cli('org create --tenant ACME --code SALES --name Dup');
    expect(clash.code).toBe(1);
    expect(clash.stderr).toMatch(/ORGANIZATION_CODE_ALREADY_EXISTS/);
  });

  it('role create: code, permissions and department head as given', async () => {
    const result = await cli(
      'role create --tenant ACME --org SALES --name "Trưởng phòng" --code HEAD --permissions user:view,document:create,user:view --department-head --json',
    );
    expect(result.code).toBe(0);
    const role = result.json<{ id: number }>();
    expect(role).toEqual({
      id: role.id,
      tenantCode: 'ACME',
      organizationCode: 'SALES',
      code: 'HEAD',
      name: 'Trưởng phòng',
      permissions: ['user:view', 'document:create'],
      isDepartmentHead: true,
    });
    const held = await h.deps.db
      .selectFrom('role_permissions')
      .select('permission')
      .where('role_id', '=', role.id)
      .orderBy('permission')
      .execute();
    expect(held.map((row) => row.permission)).toEqual(['document:create', 'user:view']);

    // Without --code, the code comes from the name (diacritics folded), never the admin's DEFAULT.
    const plain = await cli('role create --tenant ACME --org SALES --name "Nhân viên" --json');
    expect(plain.json()).toMatchObject({
      code: 'NHAN_VIEN',
      permissions: [],
      isDepartmentHead: false,
    });
    // A name that folds to a code the organization has already gets the next free suffix.
    const folded = await cli('role create --tenant ACME --org SALES --name "nhân-viên" --json');
    expect(folded.json()).toMatchObject({ code: 'NHAN_VIEN_2', name: 'nhân-viên' });
    const third = await cli('role create --tenant ACME --org SALES --name "NHÂN VIÊN" --json');
    expect(third.json()).toMatchObject({ code: 'NHAN_VIEN_3' });
    // Another organization starts over: codes are looked up within an organization.
    const root = await cli('role create --tenant ACME --org ACME --name "Nhân viên" --json');
    expect(root.json()).toMatchObject({ code: 'NHAN_VIEN' });
    const dup = await cli('role create --tenant ACME --org SALES --name "Nhân viên"');
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/ROLE_NAME_ALREADY_EXISTS/);
  });

  it('webhook create: https URL, default document events, secret printed once and stored encrypted', async () => {
    const created = await cli(
      'webhook create --tenant ACME --org SALES --url https://hooks.partner.example/esign --json',
    );
    expect(created.code).toBe(0);
    const { id, secret } = created.json<{ id: string; secret: string }>();
    expect(Object.keys(created.json()).sort()).toEqual(['id', 'secret']);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const row = await h.deps.db
      .selectFrom('webhook_subscriptions')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      url: 'https://hooks.partner.example/esign',
      events: '["document.completed","document.rejected"]',
      active: 1,
    });
    expect(row.secret_encrypted).not.toContain(secret.slice(6));
    expect(decryptSecret(h.deps.secrets, row.secret_encrypted)).toBe(secret);

    const optIn = await cli(
      'webhook create --tenant ACME --org ACME --url https://hooks.partner.example/notify --events "notification.task_assigned_external, notification.process_finished"',
    );
    expect(optIn.code).toBe(0);
    const printedSecrets = optIn.stdout.match(/whsec_[A-Za-z0-9_-]{43}/g) ?? [];
    expect(printedSecrets).toHaveLength(1);

    const listed = await cli('webhook list --tenant ACME --json');
    expect(listed.stdout).not.toContain('whsec_');
    const { subscriptions } = listed.json<{ subscriptions: Record<string, unknown>[] }>();
    expect(subscriptions.map((s) => [s.organizationCode, s.events, s.active])).toEqual([
      ['SALES', ['document.completed', 'document.rejected'], true],
      ['ACME', ['notification.task_assigned_external', 'notification.process_finished'], true],
    ]);
    expect(Object.keys(subscriptions[0]!).sort()).toEqual([
      'active',
      'createdAt',
      'events',
      'id',
      'organizationCode',
      'tenantCode',
      'updatedAt',
      'url',
    ]);

    const disabled = await cli(`webhook disable --id ${id} --json`);
    expect(disabled.json()).toEqual({ id, active: false, alreadyDisabled: false });
    const twice = await cli(`webhook disable --id ${id}`);
    expect(twice.stdout).toBe(
      `Webhook subscription ${id} was already disabled; nothing changed.\n`,
    );
    const stored = await h.deps.db
      .selectFrom('webhook_subscriptions')
      .select('active')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(stored.active).toBe(0);
    const unknown = await cli('webhook disable --id no-such-id');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/WEBHOOK_SUBSCRIPTION_NOT_FOUND/);
  });

  it('domain add: stores the normalised origin once; a duplicate is an idempotent message', async () => {
    const first = await cli(
      'domain add --tenant ACME --origin HTTPS://Partner.Example:443/ --json',
    );
    expect(first.code).toBe(0);
    expect(first.json()).toEqual({
      tenantCode: 'ACME',
      origin: 'https://partner.example',
      changed: true,
    });
    const again = await cli('domain add --tenant ACME --origin https://partner.example');
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(
      'https://partner.example was already registered for tenant ACME; nothing changed.\n',
    );
    const dev = await cli('domain add --tenant ACME --origin http://localhost:5173');
    expect(dev.code).toBe(0);
    const rows = await h.deps.db
      .selectFrom('embedding_origins')
      .select('origin')
      .orderBy('origin')
      .execute();
    expect(rows.map((row) => row.origin)).toEqual([
      'http://localhost:5173',
      'https://partner.example',
    ]);
    const removed = await cli('domain remove --tenant ACME --origin http://localhost:5173 --json');
    expect(removed.json()).toEqual({
      tenantCode: 'ACME',
      origin: 'http://localhost:5173',
      changed: true,
    });
  });

  it('user create --super-admin: no tenant, password stored hashed, signs in with the password', async () => {
    const created = await runCli(
      h.dataDir,
      'user create --super-admin --username ops --email ops@esign.example --password "S3cure pass" --json',
    );
    expect(created.code).toBe(0);
    expect(created.stdout).not.toContain('S3cure');
    expect(created.stderr).not.toContain('S3cure');
    const row = await h.deps.db
      .selectFrom('users')
      .selectAll()
      .where('username', '=', 'ops')
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      tenant_id: null,
      organization_id: null,
      is_super_admin: 1,
      status: 2,
      email: 'ops@esign.example',
    });
    expect(row.password_hash).toMatch(/^scrypt\$/);
    expect(created.json()).toEqual({
      id: row.id,
      username: 'ops',
      email: 'ops@esign.example',
      name: null,
      status: 2,
      isSuperAdmin: true,
    });
    const login = await h.request('POST', '/api/auth/login', {
      json: { username: 'ops@esign.example', password: 'S3cure pass' },
    });
    expect(login.status).toBe(200);
    expect(
      (await readJson<{ data: { accessToken: string } }>(login)).data.accessToken,
    ).toBeTruthy();
    const dup = await cli(
      'user create --super-admin --username OPS --email x@esign.example --password p',
    );
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/USERNAME_ALREADY_EXISTS/);
  });
});
