import { allPermissions } from '../../src/tenancy/permissionCatalog';
import { createHarness, type Harness, readJson } from '../support/harness';
import { runCli } from './runCli';

jest.setTimeout(120_000);

interface PartnerLogin {
  data: {
    userInfo: {
      username: string;
      type: string;
      status: number;
      organizationId: number;
      memberOf: { organizationCode: string; roleName: string }[];
    };
    permission: string[];
  };
}

describe('admin user create: tenant users through the directory service', () => {
  let h: Harness;
  let orgKey: string;
  const cli = (command: string) => runCli(h.dataDir, command);
  const partnerLogin = (username: string) =>
    h.request('POST', '/api/auth/partner-login', {
      headers: { 'x-api-key': orgKey },
      json: { username },
    });

  beforeAll(async () => {
    h = createHarness();
    expect((await cli('tenant create --code DEMO --name "Công ty Demo"')).code).toBe(0);
    expect((await cli('org create --tenant DEMO --code HR --name "Nhân sự"')).code).toBe(0);
    expect(
      (await cli('role create --tenant DEMO --org HR --name "Nhân viên" --permissions user:view'))
        .code,
    ).toBe(0);
  });
  afterAll(() => h.close());

  it('creates an active internal user with its roles and a hashed password; it can sign in and its key acts with its permissions', async () => {
    const created = await runCli(
      h.dataDir,
      'user create --tenant DEMO --username demo.admin --email Admin@Demo.example --name "Quản trị viên" --code DEMO-ADMIN --phone 0901234567 --identity-number 001099012345 --password - --member "DEMO:Quản trị" --member "HR:Nhân viên" --json',
      { input: 'một mật khẩu dài\n' },
    );
    expect(created.code).toBe(0);
    expect(created.stdout).not.toContain('mật khẩu');
    const view = created.json<Record<string, unknown>>();
    expect(view).toMatchObject({
      code: 'DEMO-ADMIN',
      username: 'demo.admin',
      email: 'Admin@Demo.example',
      name: 'Quản trị viên',
      phone: '0901234567',
      identityNumber: '001099012345',
      status: 2,
      type: 'internal',
      members: [
        { organizationCode: 'DEMO', roleName: 'Quản trị' },
        { organizationCode: 'HR', roleName: 'Nhân viên' },
      ].map((member) => expect.objectContaining(member)),
    });
    const row = await h.deps.db
      .selectFrom('users')
      .innerJoin('organizations', 'organizations.id', 'users.organization_id')
      .select(['users.password_hash', 'organizations.code as organizationCode'])
      .where('users.username', '=', 'demo.admin')
      .executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^scrypt\$/);
    expect(row.organizationCode).toBe('DEMO');

    const login = await h.request('POST', '/api/auth/login', {
      json: { username: 'admin@demo.example', password: 'một mật khẩu dài' },
    });
    expect(login.status).toBe(200);

    const key = await cli('apikey create --tenant DEMO --org DEMO --user demo.admin --json');
    orgKey = key.json<{ key: string }>().key;
    const partner = await partnerLogin('demo.admin');
    expect(partner.status).toBe(201);
    const body = await readJson<PartnerLogin>(partner);
    expect(body.data.permission).toEqual([...allPermissions]);
  });

  it('creates an external user (--type external) outside every organization; partner login gives organizationId -1', async () => {
    const created = await cli(
      'user create --tenant DEMO --username ky.so --email signer@partner.example --name "Người ký" --type external',
    );
    expect(created.code).toBe(0);
    expect(created.stdout).toBe(
      'Created external user ky.so (signer@partner.example) in tenant DEMO; active.\nRoles: none. Password: none (partner login or login-server only).\n',
    );
    const row = await h.deps.db
      .selectFrom('users')
      .select(['organization_id', 'status', 'type', 'password_hash'])
      .where('username', '=', 'ky.so')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      organization_id: null,
      status: 2,
      type: 'external',
      password_hash: null,
    });
    const partner = await partnerLogin('ky.so');
    expect(partner.status).toBe(201);
    const { userInfo, permission } = (await readJson<PartnerLogin>(partner)).data;
    expect(userInfo).toMatchObject({
      username: 'ky.so',
      type: 'external',
      status: 2,
      organizationId: -1,
    });
    expect(permission).toEqual([]);
  });

  it("refuses with the directory's errors and writes nothing: unknown role, taken e-mail, unknown tenant", async () => {
    const before = await h.deps.db.selectFrom('users').select('id').execute();
    const cases: [string, string][] = [
      [
        'user create --tenant DEMO --username x1 --email x1@demo.example --member "DEMO:Kế toán"',
        'ROLE_NOT_FOUND_IN_ORGANIZATION',
      ],
      [
        'user create --tenant DEMO --username x2 --email ADMIN@demo.example',
        'EMAIL_ALREADY_EXISTS',
      ],
      [
        'user create --tenant DEMO --username x3 --email x3@demo.example --code DEMO-ADMIN',
        'USER_CODE_ALREADY_EXISTS',
      ],
      ['user create --tenant NOPE --username x4 --email x4@demo.example', 'TENANT_CODE_NOT_FOUND'],
      [
        'user create --tenant DEMO --username x5 --email x5@demo.example --member "GHOST:Nhân viên"',
        'ORGANIZATION_CODE_NOT_FOUND',
      ],
    ];
    for (const [command, code] of cases) {
      const result = await cli(`${command} --json`);
      expect({
        command,
        exit: result.code,
        code: result.json<{ error: { code: string } }>().error.code,
      }).toEqual({
        command,
        exit: 1,
        code,
      });
    }
    expect(await h.deps.db.selectFrom('users').select('id').execute()).toEqual(before);
  });

  it('refuses malformed user arguments with exit 2', async () => {
    const cases: [string, RegExp][] = [
      [
        'user create --tenant DEMO --username y --email not-an-email',
        /email: Invalid email address/,
      ],
      [
        'user create --tenant DEMO --username y --email y@demo.example --member DEMO',
        /--member takes ORG:ROLE_NAME, got "DEMO"/,
      ],
      [
        'user create --tenant DEMO --username y --email y@demo.example --type robot',
        /--type must be internal or external/,
      ],
      ['user create --tenant DEMO --email y@demo.example', /--username is required/],
      ['user create --super-admin --username y --email y@ops.example', /--password is required/],
    ];
    const results = await Promise.all(cases.map(([command]) => cli(command)));
    cases.forEach(([command, message], index) => {
      expect({ command, code: results[index]!.code }).toEqual({ command, code: 2 });
      expect(results[index]!.stderr).toMatch(message);
    });
  });
});
