import { sqliteHandle } from '../../src/db/database';
import { addUser, createHarness, type Harness } from '../support/harness';
import { runCli } from './runCli';

jest.setTimeout(120_000);

describe('admin CLI next to a running server', () => {
  let h: Harness;
  beforeAll(() => {
    h = createHarness();
  });
  afterAll(() => h.close());

  it('waits for the server to release its write lock, then commits; the server sees the write at once', async () => {
    const sqlite = sqliteHandle(h.runtime.database);
    // The server is in the middle of a write transaction (as inTransaction does it).
    sqlite.exec('BEGIN IMMEDIATE');
    let finished = false;
    const pending = runCli(h.dataDir, 'tenant create --code LIVE --name Live --json').then(
      (result) => {
        finished = true;
        return result;
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(finished).toBe(false);
    sqlite.exec('COMMIT');

    const result = await pending;
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const { id } = result.json<{ id: number }>();
    const tenant = await h.deps.db
      .selectFrom('tenants')
      .select(['id', 'code'])
      .where('code', '=', 'LIVE')
      .executeTakeFirstOrThrow();
    expect(tenant).toEqual({ id, code: 'LIVE' });
  });

  it('issues a key while the server serves requests, and the server accepts it without a restart', async () => {
    const tenant = await h.deps.db
      .selectFrom('tenants')
      .innerJoin('organizations', 'organizations.tenant_id', 'tenants.id')
      .innerJoin('roles', 'roles.organization_id', 'organizations.id')
      .select(['tenants.id as tenantId', 'organizations.id as rootId', 'roles.id as roleId'])
      .where('tenants.code', '=', 'LIVE')
      .executeTakeFirstOrThrow();
    await addUser(
      h,
      {
        tenantId: tenant.tenantId,
        organizationId: tenant.rootId,
        code: 'L1',
        username: 'admin.live',
        email: 'admin@live.example',
        status: 2,
        type: 'internal',
      },
      [{ organizationId: tenant.rootId, roleId: tenant.roleId }],
    );
    // The server keeps answering while the CLI runs.
    const cliRun = runCli(
      h.dataDir,
      'apikey create --tenant LIVE --org LIVE --user admin.live --json',
    );
    const healthChecks: number[] = [];
    let done = false;
    void cliRun.then(() => {
      done = true;
    });
    while (!done) {
      healthChecks.push((await h.request('GET', '/health')).status);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(healthChecks.length).toBeGreaterThan(0);
    expect(new Set(healthChecks)).toEqual(new Set([200]));
    const { key } = (await cliRun).json<{ key: string }>();
    const login = await h.request('POST', '/api/auth/partner-login', {
      headers: { 'x-api-key': key },
      json: { username: 'admin.live' },
    });
    expect(login.status).toBe(201);
  });
});
