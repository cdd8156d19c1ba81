import fs from 'node:fs';
import path from 'node:path';
import { hashPassword } from '../../src/platform/passwords';
import {
  allPermissions,
  type Permission,
  permissionCatalog,
} from '../../src/tenancy/permissionCatalog';
import { globalKey, type Harness, type SeededTenant } from '../support/harness';
import {
  errorOf,
  expectUnauthorized,
  orgKey,
  type ProbeApp,
  roleWith,
  send,
  spec401,
  tenantUser,
  twoTenants,
  wrongKey,
} from './fixtures';

let h: Harness, app: ProbeApp, acme: SeededTenant;

beforeAll(async () => {
  ({ h, app, acme } = await twoTenants());
  await tenantUser(h, acme, { username: 'known.user', code: 'EMP-1' });
});
afterAll(() => h.close());

interface TableRow {
  row: number;
  method: string;
  path: string;
  permission: Permission;
  json?: unknown;
}

const directory = '/api/integration/directory';

/** docs/permissions.md, row by row: the directory endpoints of document 2 and their guard. */
const directoryTable: TableRow[] = [
  { row: 9, method: 'GET', path: `${directory}/organizations`, permission: 'organization:view' },
  { row: 10, method: 'GET', path: `${directory}/roles`, permission: 'role:view' },
  { row: 11, method: 'GET', path: `${directory}/users`, permission: 'user:view' },
  { row: 12, method: 'GET', path: `${directory}/users/EMP-1`, permission: 'user:view' },
  {
    row: 13,
    method: 'POST',
    path: `${directory}/users`,
    permission: 'user:manage',
    json: { code: 'EMP-NEW', email: 'new.employee@example.com', name: 'New Employee' },
  },
  {
    row: 14,
    method: 'PUT',
    path: `${directory}/users/EMP-1`,
    permission: 'user:manage',
    json: { name: 'Renamed' },
  },
  {
    row: 15,
    method: 'PUT',
    path: `${directory}/users/EMP-1/status`,
    permission: 'user:manage',
    json: { status: 3 },
  },
  {
    row: 16,
    method: 'POST',
    path: `${directory}/users/bulk`,
    permission: 'user:manage',
    json: { users: [{ code: 'EMP-BULK', email: 'bulk.employee@example.com' }] },
  },
];

/** An organization key of ACME bound to a new user whose one role holds `permissions`. */
async function keyHolding(name: string, permissions: string[]) {
  const roleId = await roleWith(h, acme, name, permissions);
  const user = await tenantUser(h, acme, { username: `holder.${name.toLowerCase()}` }, roleId);
  return (await orgKey(h, acme, { userId: user.id })).key;
}

describe('Permissions table (docs/permissions.md)', () => {
  it.each(directoryTable)(
    '$row. $method $path is guarded by $permission',
    async ({ row, method, path, permission, json }) => {
      const without = await keyHolding(
        `Without${row}`,
        allPermissions.filter((held) => held !== permission),
      );
      const denied = await send(app, method, path, { headers: { 'X-API-Key': without }, json });
      expect(denied.status).toBe(403);
      expect(await errorOf(denied)).toEqual({
        statusCode: 403,
        message: 'Forbidden: insufficient permissions',
        error: 'Forbidden',
        code: 'FORBIDDEN',
      });
      const only = await keyHolding(`Only${row}`, [permission]);
      const allowed = await send(app, method, path, { headers: { 'X-API-Key': only }, json });
      expect(allowed.status).toBe(method === 'POST' && row === 13 ? 201 : 200);
    },
  );

  it('auth endpoints need no permission: a credential of a user without any role is enough', async () => {
    const user = await tenantUser(h, acme, {
      username: 'no.roles',
      identityNumber: '001090000999',
      passwordHash: await hashPassword('pass phrase'),
    });
    const key = (await orgKey(h, acme, { userId: user.id })).key;
    const login = await send(app, 'POST', '/api/auth/login', {
      json: { username: 'no.roles', password: 'pass phrase' },
    });
    expect(login.status).toBe(200);
    const server = await send(app, 'POST', '/api/auth/login-server', {
      json: { secretKey: key, cccd: '001090000999' },
    });
    expect(server.status).toBe(200);
    const partner = await send(app, 'POST', '/api/auth/partner-login', {
      headers: { 'x-api-key': key },
      json: { username: 'no.roles' },
    });
    expect(partner.status).toBe(201);
  });
});

describe('docs/permissions.md', () => {
  const doc = fs.readFileSync(path.join(__dirname, '../../../docs/permissions.md'), 'utf8');
  const cells = (line: string) =>
    line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim().replace(/`/g, ''));

  it('lists the directory endpoints with the permissions the tests above enforce', () => {
    const rows = doc
      .split('\n')
      .filter((line) => /^\| (9|1[0-6])\s+\|/.test(line))
      .map(cells)
      .map(([row, endpoint, , permission]) => ({ row, endpoint, permission }));
    expect(rows).toEqual(
      directoryTable.map((entry) => ({
        row: String(entry.row),
        endpoint: `${entry.method} ${entry.path.replace('EMP-1', '{code}')}`,
        permission: entry.permission,
      })),
    );
  });

  it('its catalog is the catalog of the code, with the same meanings', () => {
    const catalog = doc
      .split('\n')
      .filter((line) => /^\| `[a-z-]+:[a-z-]+`\s+\|/.test(line))
      .map(cells);
    expect(Object.fromEntries(catalog)).toEqual(permissionCatalog);
    expect(catalog.map(([name]) => name)).toEqual(allPermissions);
  });
});

describe('Which credentials each area accepts: directory routes', () => {
  const organizations = `${directory}/organizations`;

  it('the former apikey header gets the token layer 401 on a real directory route', async () => {
    await expectUnauthorized(
      await send(app, 'GET', organizations, { headers: { apikey: acme.orgKey } }),
    );
  });

  it('an unbound global key with tenantCode reads the directory', async () => {
    const response = await send(app, 'GET', `${organizations}?tenantCode=ACME`, {
      headers: { 'X-API-Key': await globalKey(h) },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { items: { code: string }[]; total: number };
    expect(body.items.map((item) => item.code)).toEqual(['ACME']);
  });

  it('failed keys on a directory route count against the client address (default limits)', async () => {
    const world = await twoTenants({ env: { RATE_LIMIT_AUTH: '', RATE_LIMIT_API: '' } });
    try {
      const address = '203.0.113.99';
      const list = (key: string, from = address) =>
        send(world.app, 'GET', organizations, { address: from, headers: { 'X-API-Key': key } });
      for (let index = 0; index < 10; index += 1) {
        await expectUnauthorized(await list(wrongKey), spec401.invalidKey);
      }
      const blocked = await list(world.acme.orgKey);
      expect(blocked.status).toBe(429);
      expect(blocked.headers.get('Retry-After')).toBe('60');
      expect((await list(world.acme.orgKey, '203.0.113.100')).status).toBe(200);
    } finally {
      await world.h.close();
    }
  });
});
