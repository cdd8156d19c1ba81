import type { UserRow } from '../../src/auth/queries';
import { subscribableEvents } from '../../src/webhooks/subscriptions';
import { dossierRow, tasksOf } from '../support/dossiers';
import { forceFailure } from '../support/forcedFailure';
import type { Harness } from '../support/harness';
import { accountOf } from '../workflow/world';
import {
  anh,
  approveAs,
  binh,
  completeHdmb,
  type EventSetup,
  envelopeOf,
  eventSetup,
  failureOf,
  hdmbDossier,
  receivedOf,
  rejectAs,
  signAsAnh,
} from './fixtures';

let s: EventSetup;
beforeEach(async () => {
  s = await eventSetup();
});
afterEach(() => s.close());

const internal = (user: UserRow) => ({
  type: 'internal',
  name: user.name,
  email: user.email,
  phone: user.phone,
  credentials: null,
});

const anhRecipient = {
  type: 'external',
  name: anh.fullName,
  email: anh.email,
  phone: anh.phone,
  credentials: { userName: anh.identityNumber, password: null },
};

/** Invited by phone: `email` null, the phone set; the account's user name is the phone. */
const binhRecipient = {
  type: 'external',
  name: binh.fullName,
  email: null,
  phone: binh.phone,
  credentials: { userName: binh.phone, password: null },
};

async function userRow(h: Harness, id: number): Promise<UserRow> {
  return h.deps.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** The `data` of each `type` event that reached `path`, oldest first. */
function dataOf(path: string, type: string) {
  return receivedOf(s.receiver, path, type)
    .map(envelopeOf)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
    .map((envelope) => envelope.data);
}

describe('notification.* events', () => {
  test('only subscriptions that opted in get them; each turn that becomes active is announced', async () => {
    const { h, world, worker } = s;
    await s.subscribe('/default'); // document.* only
    await s.subscribe('/all', [...subscribableEvents]);
    const created = await hdmbDossier(world, 'HD-500');
    await completeHdmb(world, created);
    await worker.drain();

    expect(s.receiver.at('/default').map((r) => r.headers['x-webhook-event'])).toEqual([
      'document.completed',
    ]);
    expect(
      s.receiver
        .at('/all')
        .map((r) => String(r.headers['x-webhook-event']))
        .sort(),
    ).toEqual([
      'document.completed',
      'notification.process_finished',
      'notification.task_assigned_external',
      'notification.task_assigned_external',
      'notification.task_assigned_internal',
      'notification.task_assigned_internal',
    ]);

    const dossier = await dossierRow(h, created.id);
    const tasks = await tasksOf(h, created.id);
    const common = {
      transactionId: dossier.transaction_id,
      documentId: 'HD-500',
      documentUuid: dossier.uuid,
      documentTitle: 'Hợp đồng HD-500 & phụ lục',
      totalSteps: 4,
      completeDate: null,
      note: null,
      metadata: { contractNo: 'C-77', tenantCode: 'ACME' },
    };
    const signUrl = (index: number) => `${h.deps.config.appUrl}/tasks?id=${tasks[index]!.id}`;
    expect(dataOf('/all', 'notification.task_assigned_external')).toEqual([
      {
        ...common,
        step: { stepCode: 'KH', stepName: 'Khách hàng ký', order: 1 },
        recipients: [anhRecipient],
        signUrl: signUrl(0),
        expireAt: tasks[0]!.expire_at,
        prevActorName: null,
      },
      {
        ...common,
        step: { stepCode: 'DT', stepName: 'Đối tác ký', order: 2 },
        recipients: [binhRecipient],
        signUrl: signUrl(1),
        expireAt: null,
        prevActorName: anh.fullName,
      },
    ]);
    expect(tasks[0]!.expire_at).not.toBeNull();
    expect(dataOf('/all', 'notification.task_assigned_internal')).toEqual([
      {
        ...common,
        step: { stepCode: 'DUYET', stepName: 'Phê duyệt nội bộ', order: 3 },
        recipients: [internal(world.hung.row)],
        signUrl: signUrl(2),
        expireAt: null,
        prevActorName: binh.fullName,
      },
      {
        ...common,
        // A role step nobody has taken: every holder of the role.
        step: { stepCode: 'KTT', stepName: 'Kế toán trưởng xác nhận', order: 4 },
        recipients: [internal(world.minh.row), internal(world.nga.row)],
        signUrl: signUrl(3),
        expireAt: null,
        prevActorName: 'Nguyễn Văn Hùng',
      },
    ]);
    expect(dataOf('/all', 'notification.process_finished')).toEqual([
      {
        ...common,
        step: null,
        // The creator, then everyone who acted, in signing order.
        recipients: [
          internal(await userRow(h, world.adminId)),
          anhRecipient,
          binhRecipient,
          internal(world.hung.row),
          internal(world.minh.row),
        ],
        signUrl: null,
        expireAt: null,
        prevActorName: 'Phạm Văn Minh',
        completeDate: dossier.completed_at,
      },
    ]);
  });

  test('task_rejected goes to the creator and those who acted, with the reason as note', async () => {
    const { h, world, worker } = s;
    await s.subscribe('/all', [...subscribableEvents]);
    const created = await hdmbDossier(world, 'HD-501');
    await signAsAnh(world, created.id, created.fileIds[0]!);
    await approveAs(h, created.id, (await accountOf(h, binh.phone)).id);
    await rejectAs(h, created.id, world.hung.row.id, 'Thiếu chữ ký & con dấu');
    await worker.drain();

    const dossier = await dossierRow(h, created.id);
    const tasks = await tasksOf(h, created.id);
    expect(dataOf('/all', 'notification.task_rejected')).toEqual([
      {
        transactionId: dossier.transaction_id,
        documentId: 'HD-501',
        documentUuid: dossier.uuid,
        documentTitle: 'Hợp đồng HD-501 & phụ lục',
        totalSteps: 4,
        step: { stepCode: 'DUYET', stepName: 'Phê duyệt nội bộ', order: 3 },
        // hung rejected: he is not told of his own rejection.
        recipients: [internal(await userRow(h, world.adminId)), anhRecipient, binhRecipient],
        signUrl: `${h.deps.config.appUrl}/tasks?id=${tasks[2]!.id}`,
        expireAt: null,
        prevActorName: 'Nguyễn Văn Hùng',
        completeDate: dossier.rejected_at,
        note: 'Thiếu chữ ký & con dấu',
        metadata: { contractNo: 'C-77', tenantCode: 'ACME' },
      },
    ]);
    expect(dataOf('/all', 'document.rejected')).toHaveLength(1);
    expect(dataOf('/all', 'notification.process_finished')).toEqual([]);
  });
});

/** What the service queued itself, as `channel kind recipient`, in queue order. */
async function queued(h: Harness): Promise<string[]> {
  const rows = await h.deps.db
    .selectFrom('notify_outbox')
    .select(['channel', 'kind', 'recipient'])
    .orderBy('id')
    .execute();
  return rows.map((row) => `${row.channel} ${row.kind} ${row.recipient}`);
}

describe('the e-mails the service sends itself', () => {
  test('without delegation: invitations by e-mail (SMS for a phone-only signer), staff e-mails', async () => {
    const { h, world } = s;
    await s.subscribe('/default'); // document.* only: nothing is delegated
    const created = await hdmbDossier(world, 'HD-600');
    await completeHdmb(world, created);
    expect(await queued(h)).toEqual([
      `mail task_assigned_external ${anh.email}`,
      `sms task_assigned_external ${binh.phone}`,
      'mail task_assigned_internal hung@acme.vn',
      'mail task_assigned_internal minh@acme.vn',
      'mail task_assigned_internal nga@acme.vn',
      // Bình has no e-mail address: the finish is not sent by SMS.
      'mail process_finished admin.acme@example.com',
      `mail process_finished ${anh.email}`,
      'mail process_finished hung@acme.vn',
      'mail process_finished minh@acme.vn',
    ]);
  });

  test('delegated through notification.*: outside recipients left to the receiver, staff still e-mailed', async () => {
    const { h, world } = s;
    await s.subscribe('/all', [...subscribableEvents]);
    const created = await hdmbDossier(world, 'HD-601');
    await completeHdmb(world, created);
    expect(await queued(h)).toEqual([
      'mail task_assigned_internal hung@acme.vn',
      'mail task_assigned_internal minh@acme.vn',
      'mail task_assigned_internal nga@acme.vn',
      'mail process_finished admin.acme@example.com',
      'mail process_finished hung@acme.vn',
      'mail process_finished minh@acme.vn',
    ]);
  });

  test('a subscription of another event does not delegate the invitation', async () => {
    const { h, world } = s;
    await s.subscribe('/internal-only', ['notification.task_assigned_internal']);
    await hdmbDossier(world, 'HD-602');
    expect(await queued(h)).toEqual([`mail task_assigned_external ${anh.email}`]);
  });

  test('rolled back with the action that caused them', async () => {
    const { h, world } = s;
    const created = await hdmbDossier(world, 'HD-603');
    const before = await queued(h);
    const restore = await forceFailure(h.runtime.database, {
      table: 'webhook_events',
      event: 'INSERT',
      message: 'disk full',
      timing: 'AFTER',
    });
    await s.subscribe('/all', [...subscribableEvents]);
    expect(await failureOf(signAsAnh(world, created.id, created.fileIds[0]!))).toBe('disk full');
    await restore();
    expect(await queued(h)).toEqual(before);
    expect((await dossierRow(h, created.id)).signed_count).toBe(0);
  });
});
