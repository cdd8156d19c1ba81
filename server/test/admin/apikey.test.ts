import { hashSecret } from '../../src/platform/secrets';
import { addUser, createHarness, type Harness, readJson } from '../support/harness';
import { runCli } from './runCli';

jest.setTimeout(120_000);

interface PartnerLogin {
  statusCode: number;
  code?: string;
  message?: string;
  data: { userInfo: { username: string; type: string; organizationId: number } };
}

describe('admin apikey: keys issued by the operator, shown once', () => {
  let h: Harness;
  const cli = (command: string) => runCli(h.dataDir, command);
  const partnerLogin = (key: string, json: Record<string, string>) =>
    h.request('POST', '/api/auth/partner-login', { headers: { 'x-api-key': key }, json });

  beforeAll(async () => {
    // The app runs on the same DATA_DIR while the CLI writes to it.
    h = createHarness();
    expect((await cli('tenant create --code ACME --name "Acme JSC"')).code).toBe(0);
    expect((await cli('tenant create --code OTHER --name Other')).code).toBe(0);
    const tenants = await h.deps.db.selectFrom('tenants').selectAll().orderBy('id').execute();
    const [acme, other] = tenants;
    const root = await h.deps.db
      .selectFrom('organizations')
      .selectAll()
      .where('tenant_id', '=', acme!.id)
      .executeTakeFirstOrThrow();
    const adminRole = await h.deps.db
      .selectFrom('roles')
      .selectAll()
      .where('organization_id', '=', root.id)
      .executeTakeFirstOrThrow();
    const base = { tenantId: acme!.id, organizationId: root.id, status: 2 } as const;
    await addUser(
      h,
      {
        ...base,
        code: 'A1',
        username: 'admin.acme',
        email: 'admin@acme.example',
        type: 'internal',
      },
      [{ organizationId: root.id, roleId: adminRole.id }],
    );
    await addUser(h, {
      ...base,
      organizationId: null,
      code: 'X1',
      username: 'guest.acme',
      email: 'guest@partner.example',
      type: 'external',
    });
    await addUser(h, {
      tenantId: other!.id,
      organizationId: null,
      code: 'O1',
      username: 'admin.other',
      email: 'admin@other.example',
      status: 2,
      type: 'internal',
    });
    const root2 = await runCli(
      h.dataDir,
      'user create --super-admin --username root --email root@ops.example --password -',
      { input: 'correct horse battery\n' },
    );
    expect(root2.code).toBe(0);
  });
  afterAll(() => h.close());

  it('prints an organization key once (id and key) and the key works at once for partner login', async () => {
    const created = await cli(
      'apikey create --tenant ACME --org ACME --user admin@acme.example --json',
    );
    expect(created.code).toBe(0);
    const issued = created.json<{ id: number; key: string }>();
    expect(Object.keys(issued).sort()).toEqual(['id', 'key']);
    expect(issued.key).toMatch(/^esk_[a-z0-9]{16}_[A-Za-z0-9_-]{43}$/);

    const response = await partnerLogin(issued.key, { username: 'guest.acme' });
    expect(response.status).toBe(201);
    const body = await readJson<PartnerLogin>(response);
    expect(body.data.userInfo).toMatchObject({
      username: 'guest.acme',
      type: 'external',
      organizationId: -1,
    });

    const row = await h.deps.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', issued.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ kind: 'organization', expires_at: null, revoked_at: null });
    expect(row.secret_hash).toBe(hashSecret(h.deps.secrets, issued.key));
    expect(JSON.stringify(row)).not.toContain(issued.key.split('_').slice(2).join('_'));

    const listed = await cli('apikey list --tenant ACME --json');
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(issued.key.split('_').slice(2).join('_'));
    expect(listed.stdout).not.toContain(row.secret_hash);
    const { apiKeys } = listed.json<{ apiKeys: Record<string, unknown>[] }>();
    expect(apiKeys).toContainEqual({
      id: issued.id,
      kind: 'organization',
      tenantCode: 'ACME',
      organizationCode: 'ACME',
      username: 'admin.acme',
      createdAt: row.created_at,
      expiresAt: null,
      revokedAt: null,
      lastUsedAt: null,
    });
  });

  it('shows the key once in the human output, on stdout only', async () => {
    const created = await cli('apikey create --tenant ACME --org ACME --user admin.acme');
    expect(created.code).toBe(0);
    const keys = created.stdout.match(/esk_[a-z0-9]{16}_[A-Za-z0-9_-]{43}/g) ?? [];
    expect(keys).toHaveLength(1);
    expect(created.stdout).toMatch(/shown once/);
    expect(created.stderr).toBe('');
    const human = await cli('apikey list');
    // The secret part follows the second `_`; it may itself contain `_` (base64url).
    const secret = keys[0]!.slice('esk_'.length + 16 + 1);
    expect(secret).toHaveLength(43);
    expect(human.stdout).not.toContain(secret);
    expect(human.stdout.split('\n')[0]).toMatch(
      /^ID\s+KIND\s+TENANT\s+ORGANIZATION\s+USER\s+CREATED\s+EXPIRES\s+REVOKED$/,
    );
  });

  it('refuses to bind an organization key to a system super-administrator (rule 7) or to a user of another tenant', async () => {
    const before = await h.deps.db.selectFrom('api_keys').select('id').execute();
    const superAdmin = await cli('apikey create --tenant ACME --org ACME --user root --json');
    expect(superAdmin.code).toBe(1);
    expect(superAdmin.json()).toEqual({
      error: {
        code: 'API_KEY_SUPER_ADMIN_NOT_ALLOWED',
        message:
          'root is a system super-administrator; a key of tenant ACME must be bound to a tenant administrator',
      },
    });
    const foreign = await cli('apikey create --tenant ACME --org ACME --user admin.other');
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toBe('admin: USER_NOT_FOUND: No user admin.other in tenant ACME\n');
    const unknownOrg = await cli('apikey create --tenant ACME --org NOPE --user admin.acme');
    expect(unknownOrg.code).toBe(1);
    expect(unknownOrg.stderr).toMatch(/ORGANIZATION_CODE_NOT_FOUND/);
    const after = await h.deps.db.selectFrom('api_keys').select('id').execute();
    expect(after).toEqual(before);
  });

  it('warns when the bound user is not active; the key is then refused as the spec says', async () => {
    const acme = await h.deps.db
      .selectFrom('tenants')
      .select('id')
      .where('code', '=', 'ACME')
      .executeTakeFirstOrThrow();
    await addUser(h, {
      tenantId: acme.id,
      organizationId: null,
      code: 'W1',
      username: 'waiting.acme',
      email: 'waiting@acme.example',
      status: 1,
      type: 'internal',
    });
    const created = await cli('apikey create --tenant ACME --org ACME --user waiting.acme --json');
    expect(created.code).toBe(0);
    expect(created.stderr).toBe(
      'warning: waiting.acme is not active (status 1); the key is refused until the account is active.\n',
    );
    const response = await partnerLogin(created.json<{ key: string }>().key, {
      username: 'guest.acme',
    });
    expect(response.status).toBe(401);
    expect((await readJson<PartnerLogin>(response)).message).toBe(
      'Tài khoản dịch vụ không hoạt động',
    );
  });

  it('issues an unbound global key that needs tenantCode, and warns when a global key is bound to a super-administrator', async () => {
    const unbound = await cli('apikey create --global --json');
    expect(unbound.code).toBe(0);
    expect(unbound.stderr).toBe('');
    const { key } = unbound.json<{ key: string }>();
    const missingTenant = await partnerLogin(key, { username: 'guest.acme' });
    expect(missingTenant.status).toBe(400);
    const ok = await partnerLogin(key, { username: 'guest.acme', tenantCode: 'ACME' });
    expect(ok.status).toBe(201);

    const bound = await cli('apikey create --global --user root --json');
    expect(bound.code).toBe(0);
    expect(bound.stderr).toMatch(
      /^warning: the key is bound to the system super-administrator root/,
    );
    const row = await h.deps.db
      .selectFrom('api_keys')
      .innerJoin('users', 'users.id', 'api_keys.user_id')
      .select(['api_keys.kind', 'api_keys.tenant_id', 'users.username'])
      .where('api_keys.id', '=', bound.json<{ id: number }>().id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ kind: 'global', tenant_id: null, username: 'root' });
  });

  it('stores --expires in UTC and the key stops working after it', async () => {
    const expiry = new Date(Date.now() + 24 * 3600_000);
    expiry.setUTCMilliseconds(0);
    // The same instant written at +07:00 (Vietnam time).
    const local = new Date(expiry.getTime() + 7 * 3600_000).toISOString().slice(0, 19);
    const offset = `${local}+07:00`;
    const created = await cli(
      `apikey create --tenant ACME --org ACME --user admin.acme --expires ${offset} --json`,
    );
    expect(created.code).toBe(0);
    const { id, key } = created.json<{ id: number; key: string }>();
    const row = await h.deps.db
      .selectFrom('api_keys')
      .select('expires_at')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.expires_at).toBe(expiry.toISOString());

    h.clock.set(new Date(expiry.getTime() - 60_000));
    expect((await partnerLogin(key, { username: 'guest.acme' })).status).toBe(201);
    h.clock.set(new Date(expiry.getTime() + 1000));
    const expired = await partnerLogin(key, { username: 'guest.acme' });
    expect(expired.status).toBe(401);
    expect((await readJson<PartnerLogin>(expired)).message).toBe('API key không hợp lệ');
    h.clock.set('2026-11-25T08:00:00.000Z');
  });

  it('revokes a key: it then fails like a wrong key; revoking again is idempotent; an unknown id exits 1', async () => {
    const created = await cli('apikey create --tenant ACME --org ACME --user admin.acme --json');
    const { id, key } = created.json<{ id: number; key: string }>();
    expect((await partnerLogin(key, { username: 'guest.acme' })).status).toBe(201);

    const revoked = await cli(`apikey revoke --id ${id} --json`);
    expect(revoked.code).toBe(0);
    const first = revoked.json<{ id: number; revokedAt: string; alreadyRevoked: boolean }>();
    expect(first).toMatchObject({ id, alreadyRevoked: false });
    const response = await partnerLogin(key, { username: 'guest.acme' });
    expect(response.status).toBe(401);
    expect((await readJson<PartnerLogin>(response)).message).toBe('API key không hợp lệ');

    const again = await cli(`apikey revoke --id ${id}`);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(
      `API key ${id} was already revoked at ${first.revokedAt}; nothing changed.\n`,
    );
    const unknown = await cli('apikey revoke --id 999999');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('admin: API_KEY_NOT_FOUND: No API key with id 999999\n');
  });

  it('imports a legacy plaintext key by hash only; its use gets 401 API_KEY_LEGACY_NOT_SUPPORTED', async () => {
    const legacy = 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6';
    const imported = await runCli(
      h.dataDir,
      'apikey import-legacy --tenant ACME --org ACME --user admin.acme --key - --json',
      { input: `${legacy}\n` },
    );
    expect(imported.code).toBe(0);
    const { id } = imported.json<{ id: number }>();
    expect(imported.stdout).not.toContain(legacy);
    const row = await h.deps.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.kind).toBe('legacy');
    expect(row.secret_hash).toBe(hashSecret(h.deps.secrets, legacy));

    const response = await partnerLogin(legacy, { username: 'guest.acme' });
    expect(response.status).toBe(401);
    expect((await readJson<PartnerLogin>(response)).code).toBe('API_KEY_LEGACY_NOT_SUPPORTED');

    const twice = await cli(
      `apikey import-legacy --tenant ACME --org ACME --user admin.acme --key ${legacy}`,
    );
    expect(twice.code).toBe(1);
    expect(twice.stderr).toBe(
      `admin: API_KEY_ALREADY_EXISTS: This key is already on record (id ${id})\n`,
    );
  });
});
