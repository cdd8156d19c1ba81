import { inTransaction } from '../../src/db/database';
import { acknowledge, approve, completeSignedTurn, reject } from '../../src/workflow/actions';
import { createDelegation } from '../../src/workflow/delegations';
import {
  approveOpenTask,
  createDossier,
  createProcess,
  dossierRow,
  historyOf,
  openTask,
  tasksOf,
  turnsOf,
} from '../support/dossiers';
import { accountOf, day, dossierAtRoleStep, guestAnh, refusal, useWorkflowWorld } from './world';

const sha = (letter: string) => letter.repeat(64);

describe('Task actions: who may act', () => {
  const context = useWorkflowWorld();

  async function atDuyet() {
    const { h, world } = context;
    const dossier = await createDossier(h, world.process, {
      signers: [
        guestAnh,
        { stepCode: 'DUYET', userId: world.hung.row.id },
        { stepCode: 'DUYET', userId: world.lan.row.id },
      ],
    });
    const anh = await accountOf(h, guestAnh.identityNumber);
    await approveOpenTask(h, dossier.id, anh.id);
    return { dossier, task: (await openTask(h, dossier.id))! };
  }

  it('only the ACTIVE turn can be performed: a later signer of the step gets 409 NOT_YOUR_TURN', async () => {
    const { h, world } = context;
    const { task } = await atDuyet();
    expect(
      await refusal(approve(h.deps, { taskCode: task.code, actorUserId: world.lan.row.id })),
    ).toEqual([409, 'NOT_YOUR_TURN', undefined]);
  });

  it('someone who takes no part in the task gets 404 TASK_NOT_FOUND, as for an unknown code', async () => {
    const { h, world } = context;
    const { task } = await atDuyet();
    expect(
      await refusal(approve(h.deps, { taskCode: task.code, actorUserId: world.thu.row.id })),
    ).toEqual([404, 'TASK_NOT_FOUND', 'taskCode']);
    expect(
      await refusal(approve(h.deps, { taskCode: 'nope', actorUserId: world.hung.row.id })),
    ).toEqual([404, 'TASK_NOT_FOUND', 'taskCode']);
  });

  it('a delegate of the assignee acts during the delegation; the history names the delegate', async () => {
    const { h, world } = context;
    const { dossier, task } = await atDuyet();
    await createDelegation(h.deps, world.acme, {
      fromUsername: 'hung',
      toUsername: 'thu',
      startsAt: h.now(),
      endsAt: new Date(h.clock.now().getTime() + 3600_000).toISOString(),
    });
    await approve(h.deps, {
      taskCode: task.code,
      actorUserId: world.thu.row.id,
      comment: 'Thay anh Hùng',
    });
    const [, hungTurn] = await turnsOf(h, dossier.id);
    expect([hungTurn!.status, hungTurn!.assignee_user_id, hungTurn!.acted_by_user_id]).toEqual([
      'SIGNED',
      world.hung.row.id,
      world.thu.row.id,
    ]);
    expect((await historyOf(h, dossier.id)).at(-1)).toMatchObject({
      action: 'NEXT',
      actor_user_id: world.thu.row.id,
      actor_name: 'Lê Thị Thu',
      actor_username: 'thu',
      comment: 'Thay anh Hùng',
    });
    // The delegation is hung's, not lan's: thu cannot take lan's turn.
    expect(
      await refusal(approve(h.deps, { taskCode: task.code, actorUserId: world.thu.row.id })),
    ).toEqual([409, 'NOT_YOUR_TURN', undefined]);
  });

  it('after the delegation period the delegate takes no part any more', async () => {
    const { h, world } = context;
    const { task } = await atDuyet();
    await createDelegation(h.deps, world.acme, {
      fromUsername: 'hung',
      toUsername: 'nga',
      startsAt: h.now(),
      endsAt: new Date(h.clock.now().getTime() + 60_000).toISOString(),
    });
    h.clock.advance(60_000);
    expect(
      await refusal(approve(h.deps, { taskCode: task.code, actorUserId: world.nga.row.id })),
    ).toEqual([404, 'TASK_NOT_FOUND', 'taskCode']);
  });

  it('a role turn is taken by the first holder who acts; other holders then take no part', async () => {
    const { h, world } = context;
    const process = await createProcess(h, {
      tenantId: world.acme.id,
      organizationId: world.rootId,
      code: 'ROLE2',
      steps: [
        { stepCode: 'KTT', kind: 'role', roleId: world.ktRoleId, signType: 'app_submit' },
        { stepCode: 'DUYET', kind: 'internal', defaultUserId: world.hung.row.id },
      ],
    });
    const dossier = await createDossier(h, process, {});
    const task = (await openTask(h, dossier.id))!;
    expect((await turnsOf(h, dossier.id))[0]).toMatchObject({
      status: 'ACTIVE',
      assignee_user_id: null,
      role_id: world.ktRoleId,
    });
    expect(
      await refusal(approve(h.deps, { taskCode: task.code, actorUserId: world.lan.row.id })),
    ).toEqual([404, 'TASK_NOT_FOUND', 'taskCode']);
    await approve(h.deps, { taskCode: task.code, actorUserId: world.nga.row.id });
    expect((await turnsOf(h, dossier.id))[0]).toMatchObject({
      status: 'SIGNED',
      assignee_user_id: world.nga.row.id,
      acted_by_user_id: world.nga.row.id,
    });
    expect(
      await refusal(approve(h.deps, { taskCode: task.code, actorUserId: world.minh.row.id })),
    ).toEqual([404, 'TASK_NOT_FOUND', 'taskCode']);
    // The default user of the internal step is its assignee.
    expect((await turnsOf(h, dossier.id))[1]).toMatchObject({
      status: 'ACTIVE',
      assignee_user_id: world.hung.row.id,
    });
  });

  it('two holders acting at the same moment: exactly one takes the role turn', async () => {
    const { h, world } = context;
    const { roleTask } = await dossierAtRoleStep(h, world);
    const results = await Promise.allSettled([
      acknowledge(h.deps, { taskCode: roleTask.code, actorUserId: world.minh.row.id }),
      acknowledge(h.deps, { taskCode: roleTask.code, actorUserId: world.nga.row.id }),
    ]);
    expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = results.find((result) => result.status === 'rejected') as PromiseRejectedResult;
    expect(await refusal(Promise.reject(refused.reason))).toEqual([
      404,
      'TASK_NOT_FOUND',
      'taskCode',
    ]);
    const history = await historyOf(h, roleTask.dossier_id);
    expect(history.filter((row) => row.task_id === roleTask.id)).toHaveLength(1);
  });

  it('a locked account cannot act (403 ACCOUNT_LOCKED)', async () => {
    const { h, world } = context;
    const { task } = await atDuyet();
    await h.deps.db
      .updateTable('users')
      .set({ status: 3 })
      .where('id', '=', world.hung.row.id)
      .execute();
    try {
      expect(
        await refusal(approve(h.deps, { taskCode: task.code, actorUserId: world.hung.row.id })),
      ).toEqual([403, 'ACCOUNT_LOCKED', undefined]);
    } finally {
      await h.deps.db
        .updateTable('users')
        .set({ status: 2 })
        .where('id', '=', world.hung.row.id)
        .execute();
    }
  });
});

describe('Task actions: sign types', () => {
  const context = useWorkflowWorld();

  async function dossierOf(
    signType: 'digital_signature' | 'notification' | 'app_submit' | 'image_signature',
  ) {
    const { h, world } = context;
    const process = await createProcess(h, {
      tenantId: world.acme.id,
      organizationId: world.rootId,
      code: `ST-${signType}-${Math.random().toString(36).slice(2, 8)}`,
      steps: [
        { stepCode: 'A', kind: 'internal', signType, defaultUserId: world.hung.row.id },
        {
          stepCode: 'B',
          kind: 'internal',
          signType: 'app_submit',
          defaultUserId: world.lan.row.id,
        },
      ],
    });
    const dossier = await createDossier(h, process, {});
    return { dossier, task: (await openTask(h, dossier.id))! };
  }

  it('approve on a digital_signature step is refused with 422 SIGNATURE_REQUIRED', async () => {
    const { h, world } = context;
    const { dossier, task } = await dossierOf('digital_signature');
    expect(
      await refusal(approve(h.deps, { taskCode: task.code, actorUserId: world.hung.row.id })),
    ).toEqual([422, 'SIGNATURE_REQUIRED', undefined]);
    expect((await dossierRow(h, dossier.id)).signed_count).toBe(0);
    expect(await historyOf(h, dossier.id)).toEqual([]);
  });

  it('approve on a notification step is refused (422 ACKNOWLEDGE_REQUIRED); acknowledge performs it', async () => {
    const { h, world } = context;
    const { dossier, task } = await dossierOf('notification');
    expect(
      await refusal(approve(h.deps, { taskCode: task.code, actorUserId: world.hung.row.id })),
    ).toEqual([422, 'ACKNOWLEDGE_REQUIRED', undefined]);
    const outcome = await acknowledge(h.deps, {
      taskCode: task.code,
      actorUserId: world.hung.row.id,
    });
    expect(outcome).toMatchObject({
      taskStatus: 'APPROVED',
      dossierStatus: 'IN_PROGRESS',
      signedCount: 1,
    });
    expect((await historyOf(h, dossier.id))[0]).toMatchObject({
      action: 'NEXT',
      action_label: 'Đồng ý',
    });
  });

  it('acknowledge is for notification steps only (422 NOT_A_NOTIFICATION_STEP)', async () => {
    const { h, world } = context;
    const { task } = await dossierOf('app_submit');
    expect(
      await refusal(acknowledge(h.deps, { taskCode: task.code, actorUserId: world.hung.row.id })),
    ).toEqual([422, 'NOT_A_NOTIFICATION_STEP', undefined]);
  });

  it('approve performs image_signature and app_submit steps', async () => {
    const { h, world } = context;
    for (const signType of ['image_signature', 'app_submit'] as const) {
      const { task } = await dossierOf(signType);
      const outcome = await approve(h.deps, {
        taskCode: task.code,
        actorUserId: world.hung.row.id,
      });
      expect(outcome.taskStatus).toBe('APPROVED');
    }
  });

  it('reject works on any step and requires a reason (400 with details.field reason)', async () => {
    const { h, world } = context;
    const { dossier, task } = await dossierOf('digital_signature');
    for (const reason of ['', '   ']) {
      expect(
        await refusal(
          reject(h.deps, { taskCode: task.code, actorUserId: world.hung.row.id, reason }),
        ),
      ).toEqual([400, 'VALIDATION_ERROR', 'reason']);
    }
    expect(
      await refusal(
        reject(h.deps, {
          taskCode: task.code,
          actorUserId: world.hung.row.id,
          reason: 'x'.repeat(2001),
        }),
      ),
    ).toEqual([400, 'VALIDATION_ERROR', 'reason']);
    expect(
      await refusal(
        approve(h.deps, {
          taskCode: task.code,
          actorUserId: world.hung.row.id,
          comment: 'x'.repeat(2001),
        }),
      ),
    ).toEqual([400, 'VALIDATION_ERROR', 'comment']);
    const outcome = await reject(h.deps, {
      taskCode: task.code,
      actorUserId: world.hung.row.id,
      reason: 'Sai',
    });
    expect(outcome).toMatchObject({ taskStatus: 'REJECTED', dossierStatus: 'REJECTED' });
    expect((await turnsOf(h, dossier.id)).map((turn) => turn.status)).toEqual([
      'REJECTED',
      'CANCELLED',
    ]);
  });
});

describe('completeSignedTurn: the boundary of the signing pipeline', () => {
  const context = useWorkflowWorld();

  async function signingDossier() {
    const { h, world } = context;
    const process = await createProcess(h, {
      tenantId: world.acme.id,
      organizationId: world.rootId,
      code: `SIGN-${Math.random().toString(36).slice(2, 8)}`,
      steps: [
        {
          stepCode: 'KY',
          kind: 'internal',
          signType: 'digital_signature',
          defaultUserId: world.hung.row.id,
        },
        {
          stepCode: 'XEM',
          kind: 'internal',
          signType: 'notification',
          defaultUserId: world.lan.row.id,
        },
      ],
    });
    const dossier = await createDossier(h, process, {
      files: [{ title: 'Hợp đồng' }, { title: 'Phụ lục', kind: 'ATTACHMENT' }],
    });
    return { dossier, task: (await openTask(h, dossier.id))! };
  }

  it('adds a file version per signed file and advances the workflow inside the caller’s transaction', async () => {
    const { h, world } = context;
    const { dossier, task } = await signingDossier();
    const outcome = await inTransaction(h.deps.db, (trx) =>
      completeSignedTurn(trx, h.deps, {
        taskCode: task.code,
        actorUserId: world.hung.row.id,
        comment: 'Ký số',
        newFileVersions: [{ fileId: dossier.fileIds[0]!, sha256: sha('a'), size: 1234 }],
      }),
    );
    expect(outcome).toMatchObject({
      taskStatus: 'APPROVED',
      dossierStatus: 'IN_PROGRESS',
      signedCount: 1,
    });
    const versions = await h.deps.db
      .selectFrom('file_versions')
      .select(['file_id', 'version', 'sha256', 'size'])
      .where('file_id', 'in', dossier.fileIds)
      .orderBy('file_id')
      .orderBy('version')
      .execute();
    expect(versions.map((row) => [row.file_id, row.version, row.size])).toEqual([
      [dossier.fileIds[0], 1, versions[0]!.size],
      [dossier.fileIds[0], 2, 1234],
      [dossier.fileIds[1], 1, versions[2]!.size],
    ]);
    expect((await historyOf(h, dossier.id))[0]).toMatchObject({ action: 'NEXT', comment: 'Ký số' });
  });

  it('a refusal rolls the pipeline’s transaction back: no version, no history', async () => {
    const { h, world } = context;
    const { dossier, task } = await signingDossier();
    const attempt = (input: Partial<Parameters<typeof completeSignedTurn>[2]>) =>
      refusal(
        inTransaction(h.deps.db, (trx) =>
          completeSignedTurn(trx, h.deps, {
            taskCode: task.code,
            actorUserId: world.hung.row.id,
            newFileVersions: [{ fileId: dossier.fileIds[0]!, sha256: sha('b'), size: 10 }],
            ...input,
          }),
        ),
      );
    expect(await attempt({ actorUserId: world.lan.row.id })).toEqual([
      404,
      'TASK_NOT_FOUND',
      'taskCode',
    ]);
    expect(await attempt({ newFileVersions: [] })).toEqual([
      400,
      'VALIDATION_ERROR',
      'newFileVersions',
    ]);
    expect(
      await attempt({
        newFileVersions: [{ fileId: dossier.fileIds[1]!, sha256: sha('b'), size: 1 }],
      }),
    ).toEqual([400, 'FILE_NOT_IN_DOSSIER', 'newFileVersions.0.fileId']);
    expect(
      await attempt({
        newFileVersions: [
          { fileId: dossier.fileIds[0]!, sha256: sha('c'), size: 1 },
          { fileId: dossier.fileIds[0]!, sha256: 'XYZ', size: 1 },
        ],
      }),
    ).toEqual([400, 'VALIDATION_ERROR', 'newFileVersions.1']);
    const versions = await h.deps.db
      .selectFrom('file_versions')
      .select('version')
      .where('file_id', '=', dossier.fileIds[0]!)
      .execute();
    expect(versions).toEqual([{ version: 1 }]);
    expect(await historyOf(h, dossier.id)).toEqual([]);
  });

  it('is refused on steps that sign nothing (422 SIGNATURE_NOT_EXPECTED)', async () => {
    const { h, world } = context;
    const { dossier, task } = await signingDossier();
    await inTransaction(h.deps.db, (trx) =>
      completeSignedTurn(trx, h.deps, {
        taskCode: task.code,
        actorUserId: world.hung.row.id,
        newFileVersions: [{ fileId: dossier.fileIds[0]!, sha256: sha('d'), size: 5 }],
      }),
    );
    const next = (await openTask(h, dossier.id))!;
    expect(
      await refusal(
        inTransaction(h.deps.db, (trx) =>
          completeSignedTurn(trx, h.deps, {
            taskCode: next.code,
            actorUserId: world.lan.row.id,
            newFileVersions: [{ fileId: dossier.fileIds[0]!, sha256: sha('e'), size: 5 }],
          }),
        ),
      ),
    ).toEqual([422, 'SIGNATURE_NOT_EXPECTED', undefined]);
  });
});

describe('Task actions: the end of the lifecycle', () => {
  const context = useWorkflowWorld();

  it('COMPLETED, REJECTED and EXPIRED end the lifecycle: later actions get 409 DOSSIER_ENDED', async () => {
    const { h, world } = context;
    const anh = await accountOf(h, guestAnh.identityNumber).catch(() => undefined);
    const dossier = await createDossier(h, world.process, {
      signers: [guestAnh, { stepCode: 'DUYET', userId: world.hung.row.id }],
    });
    const guest = anh ?? (await accountOf(h, guestAnh.identityNumber));
    const first = (await openTask(h, dossier.id))!;
    await reject(h.deps, { taskCode: first.code, actorUserId: guest.id, reason: 'Không' });
    expect(await refusal(approve(h.deps, { taskCode: first.code, actorUserId: guest.id }))).toEqual(
      [409, 'DOSSIER_ENDED', undefined],
    );
    expect(
      await refusal(reject(h.deps, { taskCode: first.code, actorUserId: guest.id, reason: 'Lại' })),
    ).toEqual([409, 'DOSSIER_ENDED', undefined]);
  });

  it('a task already handled in a running dossier gives 409 TASK_ALREADY_HANDLED', async () => {
    const { h, world } = context;
    const dossier = await createDossier(h, world.process, {
      signers: [guestAnh, { stepCode: 'DUYET', userId: world.hung.row.id }],
    });
    const guest = await accountOf(h, guestAnh.identityNumber);
    const first = (await openTask(h, dossier.id))!;
    await approve(h.deps, { taskCode: first.code, actorUserId: guest.id });
    expect(await refusal(approve(h.deps, { taskCode: first.code, actorUserId: guest.id }))).toEqual(
      [409, 'TASK_ALREADY_HANDLED', undefined],
    );
  });

  it('an action after the deadline expires the task at once and is refused with 409 TASK_EXPIRED', async () => {
    const { h, world } = context;
    const dossier = await createDossier(h, world.process, {
      signers: [guestAnh, { stepCode: 'DUYET', userId: world.hung.row.id }],
    });
    const guest = await accountOf(h, guestAnh.identityNumber);
    const first = (await openTask(h, dossier.id))!;
    h.clock.advance(day * 1000);
    expect(await refusal(approve(h.deps, { taskCode: first.code, actorUserId: guest.id }))).toEqual(
      [409, 'TASK_EXPIRED', undefined],
    );
    const row = await dossierRow(h, dossier.id);
    expect([row.status, row.expired_at]).toEqual(['EXPIRED', first.expire_at]);
    expect((await tasksOf(h, dossier.id)).map((task) => task.status)).toEqual([4]);
    expect(
      (await historyOf(h, dossier.id)).map((entry) => [entry.action, entry.actor_user_id]),
    ).toEqual([['OVERDUE', guest.id]]);
  });
});
