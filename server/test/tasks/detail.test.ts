import { issueToken } from '../../src/auth/tokens';
import { acknowledge, approve, reject } from '../../src/workflow/actions';
import { createDelegation } from '../../src/workflow/delegations';
import {
  approveOpenTask,
  createDossier,
  createProcess,
  openTask,
  tasksOf,
} from '../support/dossiers';
import { accountOf, dossierAtRoleStep, guestAnh } from '../workflow/world';
import { data, errorOf, get, guestBao, type TaskItemBody, useTaskWorld } from './fixtures';

interface TaskDetailBody extends TaskItemBody {
  assignee: Record<string, string>;
  files: Record<string, unknown>[];
  attachments: Record<string, unknown>[];
  history: Record<string, unknown>[];
}

const at = (time: string) => `2026-11-25T${time}:00.000Z`;

describe('Task detail (endpoint 7)', () => {
  const context = useTaskWorld();
  const taskCodes = async (dossierId: number) =>
    (await tasksOf(context.h, dossierId)).map((task) => task.code);

  it('gives the task item with the caller’s record, the internal assignee, files and the history of this task only', async () => {
    const { h, world } = context;
    const [first, second] = await taskCodes(world.d1.id);
    const detail = await data<TaskDetailBody>(
      await get(h, { key: world.hung.key }, `/tasks/${second}`),
    );
    expect(detail).toMatchObject({
      taskCode: second,
      stepCode: 'DUYET',
      stepName: 'Phê duyệt nội bộ',
      signType: 'app_submit',
      status: 'APPROVED',
      assignedAt: at('09:00'),
      actionAt: at('10:00'),
      comment: 'Đã kiểm tra',
      document: { documentId: 'HD-001', status: 'IN_PROGRESS', signedCount: 2, requiredCount: 4 },
    });
    expect(detail.assignee).toEqual({
      username: 'hung',
      name: 'Nguyễn Văn Hùng',
      email: 'hung@acme.vn',
      phone: world.hung.row.phone,
    });
    expect(detail.history).toEqual([
      {
        taskId: detail.taskId,
        taskCode: second,
        stepCode: 'DUYET',
        stepName: 'Phê duyệt nội bộ',
        action: 'NEXT',
        actionLabel: 'Duyệt',
        actionAt: at('10:00'),
        comment: 'Đã kiểm tra',
        actorName: 'Nguyễn Văn Hùng',
        actorUsername: 'hung',
        actorEmail: 'hung@acme.vn',
        actorPhone: world.hung.row.phone,
      },
    ]);
    expect(first).not.toBe(second);
    expect(detail.attachments).toEqual([]);
    expect(detail.files).toHaveLength(1);
    const [file] = detail.files as [Record<string, unknown>];
    expect(file).toMatchObject({
      id: world.d1.fileIds[0],
      title: 'Hợp đồng',
      type: 'MAIN',
      ecmClassCode: 'HOP_DONG',
      mimeType: 'application/pdf',
    });
    expect(file.downloadUrl).toBe(`/api/integration/files/${file.fileUuid}/download`);
    expect(String(file.url)).toContain('&');
    expect(typeof file.size).toBe('number');
  });

  it('speaks for the caller: lan, whose turn is due, sees it PENDING with her own turn as assignee', async () => {
    const { h, world } = context;
    const [, second] = await taskCodes(world.d1.id);
    const detail = await data<TaskDetailBody>(
      await get(h, { key: world.lan.key }, `/tasks/${second}`),
    );
    expect(detail.status).toBe('PENDING');
    expect(detail).not.toHaveProperty('actionAt');
    expect(detail).not.toHaveProperty('comment');
    expect(detail.assignee).toMatchObject({ username: 'lan', name: 'Trần Thị Lan' });
  });

  it('gives a guest step’s assignee as submitted: email, phone, identityNumber, taxCode, never a username', async () => {
    const { h, world } = context;
    const [first] = await taskCodes(world.d1.id);
    const anh = await accountOf(h, guestAnh.identityNumber);
    const token = await issueToken(h.deps, anh.id, 'partner');
    const detail = await data<TaskDetailBody>(await get(h, { token }, `/tasks/${first}`));
    expect(detail.assignee).toEqual({
      email: 'anh.nguyen@khachhang.vn',
      phone: '0912 345 678',
      identityNumber: '001203004005',
    });
    expect(detail.status).toBe('APPROVED');
    expect(detail.history).toEqual([
      expect.objectContaining({ action: 'NEXT', actionLabel: 'Ký', actorName: 'Nguyễn Văn Ánh' }),
    ]);
    expect(detail.history[0]).not.toHaveProperty('actorUsername');

    const bao = await accountOf(h, guestBao.taxCode);
    const [baoTask] = await taskCodes(world.d2.id);
    const baoDetail = await data<TaskDetailBody>(
      await get(h, { token: await issueToken(h.deps, bao.id, 'partner') }, `/tasks/${baoTask}`),
    );
    expect(baoDetail.assignee).toEqual({ email: 'bao@baoan.vn', taxCode: '0101234567' });
  });

  it('without an action of the caller the task status decides, with the task’s action time and comment', async () => {
    const { h, world } = context;
    const dossier = await createDossier(h, world.process, {
      documentId: 'HD-REJ',
      signers: [
        { ...guestAnh },
        { stepCode: 'DUYET', userId: world.hung.row.id },
        { stepCode: 'DUYET', userId: world.lan.row.id },
      ],
    });
    const anh = await accountOf(h, guestAnh.identityNumber);
    await approveOpenTask(h, dossier.id, anh.id);
    const task = (await openTask(h, dossier.id))!;
    await reject(h.deps, { taskCode: task.code, actorUserId: world.hung.row.id, reason: 'Sai' });
    const lanView = await data<TaskDetailBody>(
      await get(h, { key: world.lan.key }, `/tasks/${task.code}`),
    );
    expect([lanView.status, lanView.actionAt, lanView.comment]).toEqual([
      'REJECTED',
      h.now(),
      'Sai',
    ]);
    expect(lanView.assignee).toMatchObject({ username: 'lan' });
    expect(lanView.history.map((row) => [row.action, row.actorUsername])).toEqual([
      ['REJECT', 'hung'],
    ]);
  });

  it('the expired task of hung is EXPIRED by its OVERDUE record', async () => {
    const { h, world } = context;
    const [code] = await taskCodes(world.d3.id);
    const detail = await data<TaskDetailBody>(
      await get(h, { key: world.hung.key }, `/tasks/${code}`),
    );
    expect([detail.status, detail.actionAt, detail.expireAt]).toEqual([
      'EXPIRED',
      at('09:00'),
      at('09:00'),
    ]);
    expect(detail.history).toEqual([
      expect.objectContaining({
        action: 'OVERDUE',
        actionLabel: 'Quá hạn',
        actorName: 'Nguyễn Văn Hùng',
        actorUsername: 'hung',
      }),
    ]);
  });

  it('404 TASK_NOT_FOUND for an unknown or out-of-scope taskCode', async () => {
    const { h, world } = context;
    const [, second] = await taskCodes(world.d1.id);
    for (const [credential, code] of [
      [{ key: world.hung.key }, '00000000-0000-4000-8000-000000000000'],
      [{ key: world.thu.key }, second],
      [{ key: world.betaKey }, second],
      [{ key: world.hungKtKey }, second],
      [{ key: world.adminKey }, second],
    ] as const) {
      const response = await get(h, credential, `/tasks/${code}`);
      expect(await errorOf(response)).toEqual([404, 'TASK_NOT_FOUND', 'taskCode']);
    }
  });

  it('a delegate sees a pending task during the delegation, not once it was handled', async () => {
    const { h, world } = context;
    const [code] = await taskCodes(world.d4.id);
    await createDelegation(h.deps, world.acme, {
      fromUsername: 'hung',
      toUsername: 'thu',
      startsAt: at('11:00'),
      endsAt: '2026-11-26T11:00:00Z',
    });
    const detail = await data<TaskDetailBody>(
      await get(h, { key: world.thu.key }, `/tasks/${code}`),
    );
    expect([detail.status, detail.assignee.username]).toEqual(['PENDING', 'hung']);
    await approve(h.deps, { taskCode: code!, actorUserId: world.hung.row.id });
    expect((await get(h, { key: world.thu.key }, `/tasks/${code}`)).status).toBe(404);
  });
});

describe('Task detail of a role-based step', () => {
  const context = useTaskWorld();

  it('gives roleCode and roleName while untaken, plus the person once someone took it', async () => {
    const { h, world } = context;
    const { roleTask } = await dossierAtRoleStep(h, world);
    const untaken = await data<TaskDetailBody>(
      await get(h, { key: world.nga.key }, `/tasks/${roleTask.code}`),
    );
    expect([untaken.stepCode, untaken.signType, untaken.assignee]).toEqual([
      'KTT',
      'notification',
      { roleCode: 'KTT', roleName: 'Kế toán trưởng' },
    ]);
    await acknowledge(h.deps, { taskCode: roleTask.code, actorUserId: world.minh.row.id });
    const taken = await data<TaskDetailBody>(
      await get(h, { key: world.minh.key }, `/tasks/${roleTask.code}`),
    );
    expect(taken.assignee).toEqual({
      roleCode: 'KTT',
      roleName: 'Kế toán trưởng',
      username: 'minh',
      name: 'Phạm Văn Minh',
      email: 'minh@acme.vn',
      phone: world.minh.row.phone,
    });
    expect(taken.status).toBe('APPROVED');
    // Taken by minh: nga no longer takes part.
    expect((await get(h, { key: world.nga.key }, `/tasks/${roleTask.code}`)).status).toBe(404);
  });
});

describe('Task detail of a phone-guest step', () => {
  const context = useTaskWorld();

  it('gives the phone (and identity) as submitted, without e-mail or username', async () => {
    const { h, world } = context;
    const process = await createProcess(h, {
      tenantId: world.acme.id,
      organizationId: world.rootId,
      code: 'SMS',
      steps: [{ stepCode: 'KH_SMS', kind: 'phone_guest', name: 'Khách ký qua SMS' }],
    });
    const dossier = await createDossier(h, process, {
      documentId: 'SMS-001',
      signers: [
        {
          stepCode: 'KH_SMS',
          fullName: 'Lý Thị Mai',
          phone: '+84 912-000-111',
          identityNumber: '079301000111',
        },
      ],
    });
    const mai = await accountOf(h, '079301000111');
    const task = (await openTask(h, dossier.id))!;
    const detail = await data<TaskDetailBody>(
      await get(h, { token: await issueToken(h.deps, mai.id, 'partner') }, `/tasks/${task.code}`),
    );
    expect(detail.assignee).toEqual({ phone: '+84 912-000-111', identityNumber: '079301000111' });
  });
});
