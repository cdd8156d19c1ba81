import { globalKey, type Harness, readJson, type SeededTenant } from '../support/harness';
import {
  expectUnauthorized,
  orgKey,
  type ProbeApp,
  roleWith,
  send,
  spec401,
  superAdmin,
  tenantUser,
  twoTenants,
  wrongKey,
} from './fixtures';

let h: Harness, app: ProbeApp, acme: SeededTenant;

beforeAll(async () => {
  ({ h, app, acme } = await twoTenants());
});
afterAll(() => h.close());

/** `/probe/guarded` authenticates as the directory does and requires `user:manage`. */
const guarded = (key: string) =>
  send(app, 'GET', '/probe/guarded', { headers: { 'X-API-Key': key } });

async function keyOfUserWith(username: string, permissions: string[] | null) {
  const roleId =
    permissions === null ? undefined : await roleWith(h, acme, `Role of ${username}`, permissions);
  const user = await tenantUser(h, acme, { username }, roleId);
  return (await orgKey(h, acme, { userId: user.id })).key;
}

describe('Authorization', () => {
  it('a missing permission gives 403: statusCode 403, message, error Forbidden', async () => {
    const key = await keyOfUserWith('viewer.acme', ['user:view', 'organization:view']);
    const response = await guarded(key);
    expect(response.status).toBe(403);
    expect(await readJson(response)).toEqual({
      statusCode: 403,
      message: 'Forbidden: insufficient permissions',
      error: 'Forbidden',
      code: 'FORBIDDEN',
    });
  });

  it('a user without any role holds no permission', async () => {
    expect((await guarded(await keyOfUserWith('nobody.acme', null))).status).toBe(403);
  });

  it('a role holding resource:action passes', async () => {
    const response = await guarded(await keyOfUserWith('manager.acme', ['user:manage']));
    expect(response.status).toBe(200);
    expect(await readJson(response)).toMatchObject({ username: 'manager.acme' });
  });

  it('a disabled role grants nothing', async () => {
    const roleId = await roleWith(h, acme, 'Disabled managers', ['user:manage']);
    await h.deps.db.updateTable('roles').set({ status: 2 }).where('id', '=', roleId).execute();
    const user = await tenantUser(h, acme, { username: 'disabled.role' }, roleId);
    expect((await guarded((await orgKey(h, acme, { userId: user.id })).key)).status).toBe(403);
  });

  it('the "*" permission of the tenant administrator role holds every permission', async () => {
    expect((await guarded(acme.orgKey)).status).toBe(200);
  });

  it('a system super-administrator holds every permission', async () => {
    const root = await superAdmin(h, 'root.authz');
    expect((await guarded(await globalKey(h, root.id))).status).toBe(200);
  });

  it('a global key bound to nobody works the directory (user:manage included)', async () => {
    expect((await guarded(await globalKey(h))).status).toBe(200);
  });

  it('authentication comes first: a wrong key is 401, never 403', async () => {
    await expectUnauthorized(await guarded(wrongKey), spec401.invalidKey);
    await expectUnauthorized(await send(app, 'GET', '/probe/guarded'));
  });
});
