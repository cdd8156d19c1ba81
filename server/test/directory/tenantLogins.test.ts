import { toUserRow, type UserFields } from '../../src/directory/userRecords';
import {
  addUser,
  createHarness,
  type Harness,
  type SeededTenant,
  seedTenant,
} from '../support/harness';

/**
 * Migration 8 and assertIdentityFree: internal login names and e-mails (staff, super-admins) are
 * unique in the whole system; outside signers (external accounts) only within their tenant.
 */
describe('login names and e-mails: internal system-wide, external per tenant', () => {
  let h: Harness;
  let acme: SeededTenant;
  let beta: SeededTenant;
  beforeAll(async () => {
    h = createHarness();
    acme = await seedTenant(h, 'ACME');
    beta = await seedTenant(h, 'BETA');
    await addUser(h, internal(acme, 'lan.nguyen', 'lan.nguyen@acme.vn'));
    await addUser(h, {
      tenantId: null,
      organizationId: null,
      code: null,
      username: 'root.op',
      email: 'root.op@operator.example',
      status: 2,
      type: 'internal',
      isSuperAdmin: true,
    });
    await addUser(h, external(acme, '001077000555', 'khach@example.com'));
  });
  afterAll(() => h.close());

  function internal(tenant: SeededTenant, username: string, email: string | null): UserFields {
    return {
      tenantId: tenant.tenantId,
      organizationId: tenant.rootOrganizationId,
      code: null,
      username,
      email,
      status: 2,
      type: 'internal',
    };
  }

  function external(tenant: SeededTenant, username: string, email: string | null): UserFields {
    return {
      tenantId: tenant.tenantId,
      organizationId: null,
      code: null,
      username,
      email,
      status: 1,
      type: 'external',
    };
  }

  const refused = (fields: UserFields) => expect(addUser(h, fields)).rejects;

  it("an internal login name or e-mail of another tenant (or a super-admin's) is refused", async () => {
    await refused(internal(beta, 'LAN.NGUYEN', 'x1@beta.vn')).toMatchObject({
      code: 'USERNAME_ALREADY_EXISTS',
      field: 'username',
    });
    await refused(internal(beta, 'x2', 'Lan.Nguyen@ACME.vn')).toMatchObject({
      code: 'EMAIL_ALREADY_EXISTS',
      field: 'email',
    });
    // A login name may not be another account's e-mail, system-wide.
    await refused(internal(beta, 'lan.nguyen@acme.vn', 'x3@beta.vn')).toMatchObject({
      code: 'USERNAME_ALREADY_EXISTS',
    });
    await refused(internal(beta, 'root.op', 'x4@beta.vn')).toMatchObject({
      code: 'USERNAME_ALREADY_EXISTS',
    });
  });

  it("an internal login name may not be another tenant's outside signer's either", async () => {
    await refused(internal(beta, '001077000555', 'x5@beta.vn')).toMatchObject({
      code: 'USERNAME_ALREADY_EXISTS',
    });
    await refused(internal(beta, 'x6', 'khach@example.com')).toMatchObject({
      code: 'EMAIL_ALREADY_EXISTS',
    });
  });

  it('an outside signer may repeat another tenant’s outside signer, not one of its own tenant', async () => {
    const copy = await addUser(h, external(beta, '001077000555', 'KHACH@example.com'));
    expect(copy).toMatchObject({ tenant_id: beta.tenantId, username: '001077000555' });
    await refused(external(acme, '001077000555', null)).toMatchObject({
      code: 'USERNAME_ALREADY_EXISTS',
    });
    await refused(external(acme, '001077000556', 'khach@example.com')).toMatchObject({
      code: 'EMAIL_ALREADY_EXISTS',
    });
  });

  it('an outside signer may not take an internal login name or e-mail of any tenant', async () => {
    await refused(external(beta, 'lan.nguyen', null)).toMatchObject({
      code: 'USERNAME_ALREADY_EXISTS',
    });
    await refused(external(beta, '001077000557', 'lan.nguyen@acme.vn')).toMatchObject({
      code: 'EMAIL_ALREADY_EXISTS',
    });
    await refused(external(beta, 'root.op@operator.example', null)).toMatchObject({
      code: 'USERNAME_ALREADY_EXISTS',
    });
  });

  it('the indexes enforce it without the checks: internal system-wide, everyone per tenant', async () => {
    const raw = (fields: UserFields) =>
      h.deps.db.insertInto('users').values(toUserRow(fields, h.now())).execute();
    // better-sqlite3's error comes from another realm: matched by its code, not as an Error.
    const unique = {
      code: h.deps.config.databaseUrl === undefined ? 'SQLITE_CONSTRAINT_UNIQUE' : '23505',
    };
    await expect(raw(internal(beta, 'lan.nguyen', null))).rejects.toMatchObject(unique);
    await expect(raw(internal(beta, 'x7', 'lan.nguyen@acme.vn'))).rejects.toMatchObject(unique);
    await expect(raw(external(acme, '001077000555', null))).rejects.toMatchObject(unique);
    await expect(raw(external(acme, 'x8', 'khach@example.com'))).rejects.toMatchObject(unique);
    const superAdmin = (username: string): UserFields => ({
      tenantId: null,
      organizationId: null,
      code: null,
      username,
      email: null,
      status: 2,
      type: 'internal',
      isSuperAdmin: true,
    });
    await expect(raw(superAdmin('root.op'))).rejects.toMatchObject(unique);
    await expect(raw(external(beta, '001077000999', null))).resolves.toBeDefined();
    await expect(raw(external(acme, '001077000999', null))).resolves.toBeDefined();
  });
});
