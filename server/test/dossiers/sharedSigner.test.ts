import { hashPassword } from '../../src/platform/passwords';
import { addUser, globalKey } from '../support/harness';
import { hdldBody, openWorld, reply, type World } from './fixtures';

/**
 * One citizen signs dossiers of two tenants (ACME and BETA): outside signers are per tenant, so
 * each tenant has its own external account with the citizen id as username.
 */
let world: World;
beforeAll(async () => {
  world = await openWorld();
});
afterAll(() => world.close());

const citizenId = '001088000123';
const citizenEmail = 'chi.tran@example.com';

function guestSigner(identityNumber = citizenId, email = citizenEmail) {
  return { stepCode: 'GUEST', fullName: 'Trần Thị Chi', email, identityNumber };
}

async function create(body: unknown, key: string): Promise<number> {
  const [status, answer] = await reply<{ data: { folderId: number } }>(
    await world.create(body, key),
  );
  if (status !== 201) throw new Error(`expected 201, got ${status}: ${JSON.stringify(answer)}`);
  return answer.data.folderId;
}

/** ACME's HDLD needs the phone guest too; BETA's HDLD has the guest step only. */
const inAcme = (signer = guestSigner()) =>
  create(
    hdldBody(world, { signers: [signer, { stepCode: 'PHONE', phone: '0912000999' }] }),
    world.acme.orgKey,
  );
const inBeta = (signer = guestSigner()) =>
  create({ ...hdldBody(world), signers: [signer] }, world.beta.orgKey);

function accountsNamed(username: string) {
  return world.h.deps.db
    .selectFrom('users')
    .select(['id', 'tenant_id as tenantId', 'type', 'username', 'email', 'identity_number'])
    .where('username', '=', username)
    .orderBy('id')
    .execute();
}

async function guestAssignee(folderId: number) {
  const turn = await world.h.deps.db
    .selectFrom('turns')
    .innerJoin('users', 'users.id', 'turns.assignee_user_id')
    .select(['users.id', 'users.tenant_id as tenantId'])
    .where('turns.dossier_id', '=', folderId)
    .where('turns.signer_identity_number', 'is not', null)
    .executeTakeFirstOrThrow();
  return turn;
}

async function partnerLogin(key: string, username: string) {
  return reply<{ data: { userInfo: { id: number; username: string; type: string } } }>(
    await world.h.request('POST', '/api/auth/partner-login', {
      headers: { 'x-api-key': key },
      json: { username },
    }),
  );
}

async function loginServer(secretKey: string, cccd: string) {
  return reply<{ data: { accessToken: string } }>(
    await world.h.request('POST', '/api/auth/login-server', { json: { secretKey, cccd } }),
  );
}

function subjectOf(token: string): number {
  const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
  return Number(payload.sub);
}

describe('one citizen signing in two tenants', () => {
  let acmeFolder: number;
  let betaFolder: number;
  let acmeAccount: number;
  let betaAccount: number;

  beforeAll(async () => {
    acmeFolder = await inAcme();
    betaFolder = await inBeta();
  });

  it('each tenant gets its own external account with the same username (and the e-mail)', async () => {
    const accounts = await accountsNamed(citizenId);
    expect(accounts).toEqual([
      expect.objectContaining({
        tenantId: world.acme.tenantId,
        type: 'external',
        email: citizenEmail,
        identity_number: citizenId,
      }),
      expect.objectContaining({
        tenantId: world.beta.tenantId,
        type: 'external',
        email: citizenEmail,
        identity_number: citizenId,
      }),
    ]);
    [acmeAccount, betaAccount] = accounts.map((account) => account.id) as [number, number];
  });

  it("each dossier's turn is assigned to its own tenant's account", async () => {
    expect(await guestAssignee(acmeFolder)).toEqual({
      id: acmeAccount,
      tenantId: world.acme.tenantId,
    });
    expect(await guestAssignee(betaFolder)).toEqual({
      id: betaAccount,
      tenantId: world.beta.tenantId,
    });
  });

  it("a later dossier of either tenant reuses that tenant's account", async () => {
    const again = await inBeta();
    const andAcme = await inAcme();
    expect((await guestAssignee(again)).id).toBe(betaAccount);
    expect((await guestAssignee(andAcme)).id).toBe(acmeAccount);
    expect(await accountsNamed(citizenId)).toHaveLength(2);
  });

  it("partner login in each tenant returns that tenant's account (by username or e-mail)", async () => {
    for (const login of [citizenId, citizenEmail.toUpperCase()]) {
      const [acmeStatus, acme] = await partnerLogin(world.acme.orgKey, login);
      expect([acmeStatus, acme.data.userInfo.id]).toEqual([201, acmeAccount]);
      const [betaStatus, beta] = await partnerLogin(world.beta.orgKey, login);
      expect([betaStatus, beta.data.userInfo.id]).toEqual([201, betaAccount]);
      expect(beta.data.userInfo).toMatchObject({ username: citizenId, type: 'external' });
    }
  });

  it('login-server: a tenant key finds its own account; a super-admin key is 400 USER_AMBIGUOUS', async () => {
    const [acmeStatus, acme] = await loginServer(world.acme.orgKey, citizenId);
    // Outside signers wait for activation (status 1): login-server refuses them like login.
    expect([acmeStatus, acme]).toEqual([
      403,
      expect.objectContaining({ code: 'ACCOUNT_INACTIVE' }),
    ]);
    await world.h.deps.db
      .updateTable('users')
      .set({ status: 2 })
      .where('username', '=', citizenId)
      .execute();
    const [, acmeSession] = await loginServer(world.acme.orgKey, citizenId);
    expect(subjectOf(acmeSession.data.accessToken)).toBe(acmeAccount);
    const [, betaSession] = await loginServer(world.beta.orgKey, citizenId);
    expect(subjectOf(betaSession.data.accessToken)).toBe(betaAccount);

    const root = await addUser(world.h, {
      tenantId: null,
      organizationId: null,
      code: null,
      username: 'root.shared-signer',
      email: 'root.shared-signer@operator.example',
      status: 2,
      type: 'internal',
      isSuperAdmin: true,
    });
    const [status, error] = await loginServer(await globalKey(world.h, root.id), citizenId);
    expect([status, error]).toEqual([
      400,
      expect.objectContaining({
        code: 'USER_AMBIGUOUS',
        details: expect.objectContaining({ field: 'cccd' }),
      }),
    ]);
  });

  it("general login tries each tenant's account: the one whose password fits signs in", async () => {
    const password = 'Chi-mat-khau-1';
    await world.h.deps.db
      .updateTable('users')
      .set({ password_hash: await hashPassword(password) })
      .where('id', '=', betaAccount)
      .execute();
    const [status, body] = await reply<{ data: { accessToken: string } }>(
      await world.h.request('POST', '/api/auth/login', {
        json: { username: citizenId, password },
      }),
    );
    expect(status).toBe(200);
    expect(subjectOf(body.data.accessToken)).toBe(betaAccount);
    const [wrong] = await reply(
      await world.h.request('POST', '/api/auth/login', {
        json: { username: citizenId, password: 'not-it' },
      }),
    );
    expect(wrong).toBe(401);
  });
});

describe('real conflicts stay refused', () => {
  it('a citizen id that is an internal login name of another tenant: 409 SIGNER_ACCOUNT_CONFLICT', async () => {
    await addUser(world.h, {
      tenantId: world.beta.tenantId,
      organizationId: world.beta.rootOrganizationId,
      code: 'BETA-STAFF',
      username: '001088000777',
      email: 'staff@beta.example',
      status: 2,
      type: 'internal',
    });
    const [status, error] = await reply(
      await world.create(
        hdldBody(world, {
          signers: [
            guestSigner('001088000777', 'other@example.com'),
            { stepCode: 'PHONE', phone: '0912000998' },
          ],
        }),
        world.acme.orgKey,
      ),
    );
    expect([status, error.code, error.details?.field]).toEqual([
      409,
      'SIGNER_ACCOUNT_CONFLICT',
      'signers.0.identityNumber',
    ]);
    expect(await accountsNamed('001088000777')).toHaveLength(1);
  });

  it("a guest e-mail that is another tenant's internal e-mail is not recorded on the account", async () => {
    await inAcme(guestSigner('001088000888', 'STAFF@beta.example'));
    expect(await accountsNamed('001088000888')).toEqual([
      expect.objectContaining({ tenantId: world.acme.tenantId, email: null }),
    ]);
  });
});
