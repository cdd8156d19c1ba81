import { createUser } from '../../src/directory/service';
import { createHarness, type Harness, seedTenant } from '../support/harness';

describe('createUser (service, used by the operator CLI)', () => {
  let h: Harness;
  beforeAll(() => {
    h = createHarness();
  });
  afterAll(() => h.close());

  it('creates an internal user at the tenant root, waiting for a password, with members', async () => {
    const seeded = await seedTenant(h, 'ACME');
    const tenant = await h.deps.db
      .selectFrom('tenants')
      .selectAll()
      .where('id', '=', seeded.tenantId)
      .executeTakeFirstOrThrow();
    const user = await createUser(h.deps, tenant, {
      email: 'Lan.Nguyen@Example.com',
      name: 'Nguyễn Thị Lan',
      members: [{ organizationCode: 'ACME', roleName: 'Quản trị' }],
    });
    expect(user).toEqual({
      code: null,
      username: 'Lan.Nguyen@Example.com',
      name: 'Nguyễn Thị Lan',
      email: 'Lan.Nguyen@Example.com',
      phone: null,
      identityNumber: null,
      taxCode: null,
      address: null,
      gender: null,
      status: 1,
      type: 'internal',
      members: [
        {
          organizationCode: 'ACME',
          organizationName: 'Tenant ACME',
          roleCode: 'DEFAULT',
          roleName: 'Quản trị',
        },
      ],
      createdAt: h.now(),
      updatedAt: h.now(),
    });
    const row = await h.deps.db
      .selectFrom('users')
      .select(['organization_id', 'password_hash'])
      .where('username', '=', 'Lan.Nguyen@Example.com')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ organization_id: seeded.rootOrganizationId, password_hash: null });
  });

  it('takes the CLI options: type, status, password hash and organization', async () => {
    const tenant = await h.deps.db
      .selectFrom('tenants')
      .selectAll()
      .where('code', '=', 'ACME')
      .executeTakeFirstOrThrow();
    const user = await createUser(
      h.deps,
      tenant,
      { code: 'OP1', email: 'op@example.com', username: 'operator' },
      { type: 'external', status: 2, passwordHash: 'hash', organizationId: null },
    );
    expect(user).toMatchObject({ code: 'OP1', username: 'operator', status: 2, type: 'external' });
    await expect(createUser(h.deps, tenant, { email: 'not-an-email' })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      field: 'email',
    });
  });
});
