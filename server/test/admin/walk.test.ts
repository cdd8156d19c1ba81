import { createHarness, type Harness, readJson } from '../support/harness';
import { runCli } from './runCli';

jest.setTimeout(180_000);

/**
 * A new operator's first hour, in order: the CLI output is read the way a person reads it (the
 * key is copied from the line under "shown once"), and the partner's calls go to the app
 * running on the same DATA_DIR.
 */
describe('walk: from an empty data directory to a synchronised directory and a partner token', () => {
  let h: Harness;
  const cli = async (command: string, input?: string) => {
    const result = await runCli(h.dataDir, command, input === undefined ? {} : { input });
    expect({ command, exit: result.code, stderr: result.stderr }).toEqual({
      command,
      exit: 0,
      stderr: '',
    });
    return result.stdout;
  };
  beforeAll(() => {
    h = createHarness();
  });
  afterAll(() => h.close());

  it('tenant create → user create → apikey create → directory reads and bulk sync → lock → partner login', async () => {
    // 1. The tenant, and the hint of what to do next.
    const tenantOut = await cli('tenant create --code DEMO --name "Công ty Cổ phần Demo"');
    expect(tenantOut).toContain('Created tenant DEMO (Công ty Cổ phần Demo)');
    expect(tenantOut).toContain('--member DEMO:"Quản trị"');
    await cli('org create --tenant DEMO --code KD --name "Phòng Kinh doanh"');
    await cli(
      'role create --tenant DEMO --org KD --name "Nhân viên" --permissions document:view,task:view',
    );

    // 2. The administrator the key will act for, as the hint says.
    const adminOut = await cli(
      'user create --tenant DEMO --username demo.admin --email admin@demo.example --name "Quản trị viên" --member DEMO:"Quản trị"',
    );
    expect(adminOut).toContain('Roles: DEMO:Quản trị.');

    // 3. The organization key, copied from the line after "shown once".
    const keyOut = (await cli('apikey create --tenant DEMO --org DEMO --user demo.admin')).split(
      '\n',
    );
    const key = keyOut[keyOut.findIndex((line) => line.includes('shown once')) + 1]!;
    expect(key).toMatch(/^esk_/);
    const headers = { 'x-api-key': key };

    // 4. The partner reads the organization tree.
    const organizations = await h.request('GET', '/api/integration/directory/organizations', {
      headers,
    });
    expect(organizations.status).toBe(200);
    const tree = await readJson<{
      items: { code: string; parentCode: string | null }[];
      total: number;
    }>(organizations);
    expect(tree.total).toBe(2);
    expect(tree.items.map((o) => [o.code, o.parentCode])).toEqual(
      expect.arrayContaining([
        ['DEMO', null],
        ['KD', 'DEMO'],
      ]),
    );

    // 5. It synchronises 200 employees in one bulk request.
    const users = Array.from({ length: 200 }, (_, index) => {
      const n = String(index + 1).padStart(3, '0');
      return {
        code: `NV${n}`,
        email: `nv${n}@demo.example`,
        name: `Nhân viên ${n}`,
        members: [{ organizationCode: 'KD', roleName: 'Nhân viên' }],
      };
    });
    const bulk = await h.request('POST', '/api/integration/directory/users/bulk', {
      headers,
      json: { users },
    });
    expect(bulk.status).toBe(200);
    const synced = await readJson<{
      total: number;
      created: number;
      updated: number;
      failed: number;
    }>(bulk);
    expect(synced).toMatchObject({ total: 200, created: 200, updated: 0, failed: 0 });
    const stored = await h.deps.db
      .selectFrom('users')
      .innerJoin('memberships', 'memberships.user_id', 'users.id')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('users.code', 'like', 'NV%')
      .executeTakeFirstOrThrow();
    expect(Number(stored.count)).toBe(200);

    // 6. One of them leaves: locked.
    const locked = await h.request('PUT', '/api/integration/directory/users/NV007/status', {
      headers,
      json: { status: 3 },
    });
    expect(locked.status).toBe(200);
    expect(await readJson(locked)).toMatchObject({ code: 'NV007', status: 3 });

    // 7. An outside signer gets a partner token; the locked employee does not.
    await cli(
      'user create --tenant DEMO --username khach.hang --email khach@partner.example --name "Khách hàng" --type external',
    );
    const partner = await h.request('POST', '/api/auth/partner-login', {
      headers,
      json: { username: 'khach.hang' },
    });
    expect(partner.status).toBe(201);
    const token = await readJson<{
      statusCode: number;
      data: { accessToken: string; userInfo: Record<string, unknown> };
    }>(partner);
    expect(token.statusCode).toBe(200);
    expect(token.data.accessToken.split('.')).toHaveLength(3);
    expect(token.data.userInfo).toMatchObject({
      username: 'khach.hang',
      email: 'khach@partner.example',
      type: 'external',
      organizationId: -1,
      status: 2,
    });
    const lockedLogin = await h.request('POST', '/api/auth/partner-login', {
      headers,
      json: { username: 'nv007@demo.example' },
    });
    expect(lockedLogin.status).toBe(403);

    // The operator's view afterwards: one key, never shown again.
    const keys = await cli('apikey list --tenant DEMO');
    expect(keys).not.toContain(key.split('_').slice(2).join('_'));
    expect(keys.split('\n')[1]).toMatch(/^1\s+organization\s+DEMO\s+DEMO\s+demo\.admin\s/);
  });
});
