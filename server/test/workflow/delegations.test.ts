import {
  createDelegation,
  listDelegations,
  revokeDelegation,
} from '../../src/workflow/delegations';
import { activeDelegatorIds } from '../../src/workflow/queries/delegations';
import { runCli } from '../admin/runCli';
import { createDossier, historyOf, openTask, turnsOf } from '../support/dossiers';
import { accountOf, guestAnh, refusal, useWorkflowWorld } from './world';

jest.setTimeout(120_000);

describe('Delegations: stored, with a period', () => {
  const context = useWorkflowWorld();
  const period = { startsAt: '2026-11-25T08:00:00Z', endsAt: '2026-11-30T17:00:00+07:00' };
  // The guest's external account exists once a dossier names them.
  beforeAll(() => createDossier(context.h, context.world.process, { signers: [guestAnh] }));

  it('stores a delegation between two internal users of the tenant, normalised to UTC', async () => {
    const { h, world } = context;
    const view = await createDelegation(h.deps, world.acme, {
      fromUsername: 'hung',
      toUsername: 'THU@acme.vn',
      ...period,
    });
    expect(view).toEqual({
      id: view.id,
      tenantCode: 'ACME',
      fromUsername: 'hung',
      toUsername: 'thu',
      startsAt: '2026-11-25T08:00:00.000Z',
      endsAt: '2026-11-30T10:00:00.000Z',
      createdAt: h.now(),
      revokedAt: null,
      state: 'active',
    });
    expect(await activeDelegatorIds(h.deps.db, world.thu.row.id, h.now())).toEqual([
      world.hung.row.id,
    ]);
    await revokeDelegation(h.deps, view.id);
  });

  it.each([
    [
      'a user to themselves',
      { fromUsername: 'hung', toUsername: 'hung' },
      [422, 'DELEGATION_TO_SELF', 'toUsername'],
    ],
    [
      'an unknown user',
      { fromUsername: 'ghost', toUsername: 'thu' },
      [404, 'USER_NOT_FOUND', 'fromUsername'],
    ],
    [
      'a user of another tenant',
      { fromUsername: 'hung', toUsername: 'admin.beta' },
      [404, 'USER_NOT_FOUND', 'toUsername'],
    ],
    [
      'an outside signer',
      { fromUsername: guestAnh.identityNumber, toUsername: 'thu' },
      [422, 'DELEGATION_INTERNAL_ONLY', 'fromUsername'],
    ],
    [
      'an empty period',
      { startsAt: '2026-11-26T00:00:00Z', endsAt: '2026-11-26T00:00:00Z' },
      [400, 'VALIDATION_ERROR', 'endsAt'],
    ],
    [
      'a period already over',
      { startsAt: '2026-11-01T00:00:00Z', endsAt: '2026-11-02T00:00:00Z' },
      [400, 'VALIDATION_ERROR', 'endsAt'],
    ],
    [
      'a time that is not ISO 8601',
      { startsAt: '25/11/2026' },
      [400, 'VALIDATION_ERROR', 'startsAt'],
    ],
    [
      'a time without offset',
      { endsAt: '2026-12-01T00:00:00' },
      [400, 'VALIDATION_ERROR', 'endsAt'],
    ],
  ])('refuses %s', async (_name, change, expected) => {
    const { h, world } = context;
    expect(
      await refusal(
        createDelegation(h.deps, world.acme, {
          fromUsername: 'hung',
          toUsername: 'thu',
          ...period,
          ...change,
        }),
      ),
    ).toEqual(expected);
  });

  it('lists by tenant with a state; revoking ends it and keeps the first revocation time', async () => {
    const { h, world } = context;
    const scheduled = await createDelegation(h.deps, world.acme, {
      fromUsername: 'lan',
      toUsername: 'thu',
      startsAt: '2026-12-01T00:00:00Z',
      endsAt: '2026-12-02T00:00:00Z',
    });
    expect(scheduled.state).toBe('scheduled');
    const revoked = await revokeDelegation(h.deps, scheduled.id);
    h.clock.advance(60_000);
    const again = await revokeDelegation(h.deps, scheduled.id);
    expect([revoked.state, again.revokedAt]).toEqual(['revoked', revoked.revokedAt]);
    const listed = await listDelegations(h.deps, world.acme.id);
    expect(listed.map((view) => [view.fromUsername, view.toUsername, view.state])).toEqual([
      ['lan', 'thu', 'revoked'],
      ['hung', 'thu', 'revoked'],
    ]);
    expect(await listDelegations(h.deps, world.beta.id)).toEqual([]);
    expect(await refusal(revokeDelegation(h.deps, 9999))).toEqual([
      404,
      'DELEGATION_NOT_FOUND',
      'id',
    ]);
  });
});

describe('admin delegation and admin task commands', () => {
  const context = useWorkflowWorld();
  const cli = (command: string) => runCli(context.h.dataDir, command);
  // The CLI runs in its own process on the real clock: deadlines must be set from real time.
  beforeEach(() => context.h.clock.set(new Date()));

  it('creates, lists and revokes a delegation; the delegate approves through admin task approve', async () => {
    const { h, world } = context;
    const dossier = await createDossier(h, world.process, {
      signers: [guestAnh, { stepCode: 'DUYET', userId: world.hung.row.id }],
    });
    const created = await cli(
      'delegation create --tenant ACME --from hung --to thu --starts 2020-01-01T00:00:00Z --ends 2099-01-01T00:00:00+07:00 --json',
    );
    expect(created.code).toBe(0);
    const view = created.json<{ id: number; state: string; endsAt: string }>();
    expect([view.state, view.endsAt]).toEqual(['active', '2098-12-31T17:00:00.000Z']);

    const listed = await cli('delegation list --tenant ACME');
    expect(listed.stdout).toContain('hung  thu');
    expect(listed.stdout).toContain('active');

    const anh = await accountOf(h, guestAnh.identityNumber);
    const guestStep = (await openTask(h, dossier.id))!;
    const byGuest = await cli(
      `task approve --tenant ACME --task ${guestStep.code} --user ${anh.username} --json`,
    );
    expect(byGuest.json()).toMatchObject({ taskStatus: 'APPROVED', dossierStatus: 'IN_PROGRESS' });
    const duyet = (await openTask(h, dossier.id))!;
    const byDelegate = await cli(
      `task approve --tenant ACME --task ${duyet.code} --user thu --comment "Thay anh Hùng"`,
    );
    expect(byDelegate.code).toBe(0);
    expect(byDelegate.stdout).toContain(`thu approved task ${duyet.code}: task APPROVED`);
    expect((await turnsOf(h, dossier.id))[1]).toMatchObject({
      assignee_user_id: world.hung.row.id,
      acted_by_user_id: world.thu.row.id,
    });
    expect((await historyOf(h, dossier.id)).at(-1)).toMatchObject({
      actor_username: 'thu',
      comment: 'Thay anh Hùng',
    });

    const revoked = await cli(`delegation revoke --id ${view.id} --json`);
    expect(revoked.json()).toMatchObject({ id: view.id, state: 'revoked' });
  });

  it('admin task reject needs --reason; refusals of the service exit 1 with the code', async () => {
    const { h, world } = context;
    const dossier = await createDossier(h, world.process, {
      signers: [guestAnh, { stepCode: 'DUYET', userId: world.hung.row.id }],
    });
    const task = (await openTask(h, dossier.id))!;
    const missing = await cli(`task reject --tenant ACME --task ${task.code} --user hung`);
    expect([missing.code, missing.stderr]).toEqual([
      2,
      expect.stringContaining('--reason is required'),
    ]);
    const outsider = await cli(
      `task reject --tenant ACME --task ${task.code} --user hung --reason "Sai" --json`,
    );
    expect([outsider.code, outsider.json()]).toEqual([
      1,
      { error: { code: 'TASK_NOT_FOUND', message: `No task ${task.code}` } },
    ]);
    const badTime = await cli(
      'delegation create --tenant ACME --from hung --to thu --starts soon --ends 2099-01-01T00:00:00Z',
    );
    expect([badTime.code, badTime.stderr]).toEqual([
      2,
      expect.stringContaining('starts must be an ISO 8601'),
    ]);
    const anh = await accountOf(h, guestAnh.identityNumber);
    const rejected = await cli(
      `task reject --tenant ACME --task ${task.code} --user ${anh.username} --reason "Không đồng ý"`,
    );
    expect(rejected.stdout).toContain('task REJECTED, dossier REJECTED (0/3 signed)');
  });
});
