import { inTransaction } from '../../src/db/database';
import { acknowledge, approve, reject } from '../../src/workflow/actions';
import { expireOverdueTasks } from '../../src/workflow/deadlines';
import { startWorkflow } from '../../src/workflow/lifecycle';
import {
  approveOpenTask,
  createDossier,
  dossierRow,
  historyOf,
  openTask,
  tasksOf,
  turnsOf,
} from '../support/dossiers';
import { accountOf, day, guestAnh, useWorkflowWorld, walkSigners } from './world';

const hour = 60 * 60 * 1000;

async function counts(h: Parameters<typeof dossierRow>[0], dossierId: number) {
  const row = await dossierRow(h, dossierId);
  return [row.status, row.signed_count, row.required_count];
}

describe('Dossier states and transitions: PENDING → PENDING_SIGN → IN_PROGRESS → COMPLETED', () => {
  const context = useWorkflowWorld();

  it('walks a 3-step dossier with 2 turns in step 2 to COMPLETED with the right counts and history', async () => {
    const { h, world } = context;
    const dossier = await createDossier(h, world.process, {
      title: 'Hợp đồng lao động Nguyễn Văn Ánh',
      signers: walkSigners(world),
      start: false,
    });
    expect(await counts(h, dossier.id)).toEqual(['PENDING', 0, 4]);
    expect(await tasksOf(h, dossier.id)).toEqual([]);

    // PENDING → PENDING_SIGN: first task generated, its turn active.
    await inTransaction(h.deps.db, (trx) => startWorkflow(trx, h.deps, dossier.id));
    expect(await counts(h, dossier.id)).toEqual(['PENDING_SIGN', 0, 4]);
    const first = await openTask(h, dossier.id);
    expect(first).toMatchObject({
      status: 1,
      assigned_at: '2026-11-25T08:00:00.000Z',
      expire_at: '2026-11-26T08:00:00.000Z',
    });
    const guest = await accountOf(h, guestAnh.identityNumber);

    // PENDING_SIGN → IN_PROGRESS: the first signer signs; step 2 opens with hung's turn first.
    h.clock.advance(hour);
    const afterGuest = await approve(h.deps, {
      taskCode: first!.code,
      actorUserId: guest.id,
      comment: 'Tôi đồng ý',
    });
    expect(afterGuest).toMatchObject({
      taskStatus: 'APPROVED',
      dossierStatus: 'IN_PROGRESS',
      signedCount: 1,
      requiredCount: 4,
    });
    const second = await openTask(h, dossier.id);
    expect(afterGuest.nextTaskCode).toBe(second!.code);
    expect(second).toMatchObject({ expire_at: null, assigned_at: '2026-11-25T09:00:00.000Z' });

    // IN_PROGRESS → IN_PROGRESS: hung signs, the task still waits for lan.
    h.clock.advance(hour);
    const afterHung = await approve(h.deps, {
      taskCode: second!.code,
      actorUserId: world.hung.row.id,
    });
    expect(afterHung).toMatchObject({ taskStatus: 'PENDING', signedCount: 2, nextTaskCode: null });
    expect(await counts(h, dossier.id)).toEqual(['IN_PROGRESS', 2, 4]);
    h.clock.advance(hour);
    const afterLan = await approve(h.deps, {
      taskCode: second!.code,
      actorUserId: world.lan.row.id,
      comment: 'OK',
    });
    expect(afterLan).toMatchObject({ taskStatus: 'APPROVED', signedCount: 3 });

    // Step 3 (role based): minh acknowledges, taking the role turn; the last signer completes.
    const third = await openTask(h, dossier.id);
    expect(third!.expire_at).toBe('2026-11-27T11:00:00.000Z');
    h.clock.advance(hour);
    const done = await acknowledge(h.deps, {
      taskCode: third!.code,
      actorUserId: world.minh.row.id,
    });
    expect(done).toMatchObject({
      taskStatus: 'APPROVED',
      dossierStatus: 'COMPLETED',
      signedCount: 4,
      requiredCount: 4,
      nextTaskCode: null,
    });
    const ended = await dossierRow(h, dossier.id);
    expect([ended.status, ended.completed_at, ended.rejected_at, ended.expired_at]).toEqual([
      'COMPLETED',
      '2026-11-25T12:00:00.000Z',
      null,
      null,
    ]);
    expect((await tasksOf(h, dossier.id)).map((task) => [task.status, task.action_at])).toEqual([
      [2, '2026-11-25T09:00:00.000Z'],
      [2, '2026-11-25T11:00:00.000Z'],
      [2, '2026-11-25T12:00:00.000Z'],
    ]);
    expect(
      (await turnsOf(h, dossier.id)).map((turn) => [
        turn.step_position,
        turn.turn_order,
        turn.status,
        turn.assignee_user_id,
        turn.acted_by_user_id,
      ]),
    ).toEqual([
      [1, 1, 'SIGNED', guest.id, guest.id],
      [2, 1, 'SIGNED', world.hung.row.id, world.hung.row.id],
      [2, 2, 'SIGNED', world.lan.row.id, world.lan.row.id],
      [3, 1, 'SIGNED', world.minh.row.id, world.minh.row.id],
    ]);
    expect(
      (await historyOf(h, dossier.id)).map((row) => [
        row.action,
        row.action_label,
        row.action_at,
        row.comment,
        row.actor_name,
        row.actor_username,
        row.actor_email,
      ]),
    ).toEqual([
      [
        'NEXT',
        'Ký',
        '2026-11-25T09:00:00.000Z',
        'Tôi đồng ý',
        'Nguyễn Văn Ánh',
        null,
        'anh.nguyen@khachhang.vn',
      ],
      [
        'NEXT',
        'Duyệt',
        '2026-11-25T10:00:00.000Z',
        null,
        'Nguyễn Văn Hùng',
        'hung',
        'hung@acme.vn',
      ],
      ['NEXT', 'Duyệt', '2026-11-25T11:00:00.000Z', 'OK', 'Trần Thị Lan', 'lan', 'lan@acme.vn'],
      ['NEXT', 'Đã xem', '2026-11-25T12:00:00.000Z', null, 'Phạm Văn Minh', 'minh', 'minh@acme.vn'],
    ]);
  });
});

describe('Dossier states and transitions: a signer rejects', () => {
  const context = useWorkflowWorld();

  it('ends IN_PROGRESS → REJECTED with REJECT history, the task rejected and remaining turns cancelled', async () => {
    const { h, world } = context;
    const dossier = await createDossier(h, world.process, { signers: walkSigners(world) });
    const guest = await accountOf(h, guestAnh.identityNumber);
    await approveOpenTask(h, dossier.id, guest.id);
    h.clock.advance(hour);
    const task = (await openTask(h, dossier.id))!;
    const outcome = await reject(h.deps, {
      taskCode: task.code,
      actorUserId: world.hung.row.id,
      reason: '  Sai mức lương  ',
    });
    expect(outcome).toMatchObject({
      taskStatus: 'REJECTED',
      dossierStatus: 'REJECTED',
      signedCount: 1,
      requiredCount: 4,
    });
    const ended = await dossierRow(h, dossier.id);
    expect([ended.status, ended.rejected_at, ended.completed_at]).toEqual([
      'REJECTED',
      h.now(),
      null,
    ]);
    expect((await tasksOf(h, dossier.id)).map((row) => [row.status, row.comment])).toEqual([
      [2, null],
      [3, 'Sai mức lương'],
    ]);
    expect((await turnsOf(h, dossier.id)).map((turn) => turn.status)).toEqual([
      'SIGNED',
      'REJECTED',
      'CANCELLED',
      'CANCELLED',
    ]);
    const history = await historyOf(h, dossier.id);
    expect(
      history.map((row) => [row.action, row.action_label, row.comment, row.actor_username]),
    ).toEqual([
      ['NEXT', 'Ký', null, null],
      ['REJECT', 'Không duyệt', 'Sai mức lương', 'hung'],
    ]);
  });

  it('ends PENDING_SIGN → REJECTED when the first signer rejects', async () => {
    const { h, world } = context;
    const dossier = await createDossier(h, world.process, { signers: walkSigners(world) });
    const guest = await accountOf(h, guestAnh.identityNumber);
    await reject(h.deps, {
      taskCode: (await openTask(h, dossier.id))!.code,
      actorUserId: guest.id,
      reason: 'Không đúng thông tin',
    });
    expect(await counts(h, dossier.id)).toEqual(['REJECTED', 0, 4]);
    expect((await historyOf(h, dossier.id)).map((row) => [row.action, row.actor_name])).toEqual([
      ['REJECT', 'Nguyễn Văn Ánh'],
    ]);
  });
});

describe('Dossier states and transitions: a deadline passes', () => {
  const context = useWorkflowWorld();

  it('ends PENDING_SIGN → EXPIRED with OVERDUE history whose actor is the assignee', async () => {
    const { h, world } = context;
    const dossier = await createDossier(h, world.process, { signers: walkSigners(world) });
    const guest = await accountOf(h, guestAnh.identityNumber);
    h.clock.advance(day * 1000 - 1);
    expect(await expireOverdueTasks(h.deps)).toBe(0);
    h.clock.advance(5 * hour);
    expect(await expireOverdueTasks(h.deps)).toBe(1);
    const ended = await dossierRow(h, dossier.id);
    expect([ended.status, ended.expired_at, ended.signed_count]).toEqual([
      'EXPIRED',
      '2026-11-26T08:00:00.000Z',
      0,
    ]);
    expect((await tasksOf(h, dossier.id)).map((task) => [task.status, task.action_at])).toEqual([
      [4, '2026-11-26T08:00:00.000Z'],
    ]);
    expect((await turnsOf(h, dossier.id)).map((turn) => turn.status)).toEqual([
      'EXPIRED',
      'CANCELLED',
      'CANCELLED',
      'CANCELLED',
    ]);
    const history = await historyOf(h, dossier.id);
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({
      action: 'OVERDUE',
      action_label: 'Quá hạn',
      action_at: '2026-11-26T08:00:00.000Z',
      actor_user_id: guest.id,
      actor_name: 'Nguyễn Văn Ánh',
      actor_username: null,
      actor_email: 'anh.nguyen@khachhang.vn',
      actor_phone: '0912 345 678',
      comment: null,
    });
  });

  it('ends IN_PROGRESS → EXPIRED; an untaken role turn names the role as actor', async () => {
    const { h, world } = context;
    const dossier = await createDossier(h, world.process, {
      signers: [guestAnh, { stepCode: 'DUYET', userId: world.hung.row.id }],
    });
    const guest = await accountOf(h, guestAnh.identityNumber);
    await approveOpenTask(h, dossier.id, guest.id);
    await approveOpenTask(h, dossier.id, world.hung.row.id);
    expect(await counts(h, dossier.id)).toEqual(['IN_PROGRESS', 2, 3]);
    h.clock.advance(3 * day * 1000);
    expect(await expireOverdueTasks(h.deps)).toBe(1);
    expect(await counts(h, dossier.id)).toEqual(['EXPIRED', 2, 3]);
    const overdue = (await historyOf(h, dossier.id)).at(-1);
    expect(overdue).toMatchObject({
      action: 'OVERDUE',
      actor_user_id: null,
      actor_name: 'Kế toán trưởng',
      actor_username: null,
    });
  });
});
