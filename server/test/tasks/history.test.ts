import { issueToken } from '../../src/auth/tokens';
import { createDossier, dossierRow } from '../support/dossiers';
import { accountOf, guestAnh } from '../workflow/world';
import { data, errorOf, get, useTaskWorld } from './fixtures';

interface DossierHistoryBody {
  folderId: number;
  documentId: string;
  documentUuid: string;
  documentTitle: string;
  transactionId: string | null;
  status: string;
  requiredCount: number;
  signedCount: number;
  history: Record<string, unknown>[];
}

const at = (time: string) => `2026-11-25T${time}:00.000Z`;

describe('Dossier history (endpoint 8)', () => {
  const context = useTaskWorld();

  it('gives the dossier state and every record of all steps and signers in ascending time', async () => {
    const { h, world } = context;
    const row = await dossierRow(h, world.d1.id);
    const history = await data<DossierHistoryBody>(
      await get(h, { key: world.adminKey }, '/documents/HD-001/history'),
    );
    const [kh, duyet] = await h.deps.db
      .selectFrom('tasks')
      .select(['id', 'code'])
      .where('dossier_id', '=', world.d1.id)
      .orderBy('id')
      .execute();
    expect(history).toEqual({
      folderId: world.d1.id,
      documentId: 'HD-001',
      documentUuid: world.d1.uuid,
      documentTitle: 'Hợp đồng lao động Nguyễn Văn Ánh',
      transactionId: row.transaction_id,
      status: 'IN_PROGRESS',
      requiredCount: 4,
      signedCount: 2,
      history: [
        {
          taskId: kh!.id,
          taskCode: kh!.code,
          stepCode: 'KH',
          stepName: 'Khách hàng ký',
          action: 'NEXT',
          actionLabel: 'Ký',
          actionAt: at('09:00'),
          actorName: 'Nguyễn Văn Ánh',
          actorEmail: 'anh.nguyen@khachhang.vn',
          actorPhone: '0912 345 678',
        },
        {
          taskId: duyet!.id,
          taskCode: duyet!.code,
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
      ],
    });
  });

  it('records REJECT with the reason and OVERDUE as a system record naming the assignee', async () => {
    const { h, world } = context;
    const rejected = await data<DossierHistoryBody>(
      await get(h, { key: world.adminKey }, '/documents/BB-002/history'),
    );
    expect(rejected.status).toBe('REJECTED');
    expect(rejected.history.map((row) => [row.action, row.actionLabel, row.comment])).toEqual([
      ['NEXT', 'Ký', undefined],
      ['REJECT', 'Không duyệt', 'Thiếu phụ lục'],
    ]);
    const expired = await data<DossierHistoryBody>(
      await get(h, { key: world.adminKey }, '/documents/TT-003/history'),
    );
    expect([expired.status, expired.signedCount, expired.requiredCount]).toEqual(['EXPIRED', 0, 1]);
    expect(expired.history).toEqual([
      expect.objectContaining({
        action: 'OVERDUE',
        actionLabel: 'Quá hạn',
        actionAt: at('09:00'),
        actorName: 'Nguyễn Văn Hùng',
        actorUsername: 'hung',
      }),
    ]);
  });

  it('a dossier not started yet has no history and a null transactionId', async () => {
    const { h, world } = context;
    await createDossier(h, world.process, {
      documentId: 'HD-LATER',
      signers: [{ ...guestAnh }, { stepCode: 'DUYET', userId: world.hung.row.id }],
      start: false,
    });
    const history = await data<DossierHistoryBody>(
      await get(h, { key: world.adminKey }, '/documents/HD-LATER/history'),
    );
    expect([history.status, history.transactionId, history.history]).toEqual(['PENDING', null, []]);
  });

  it('a participant with a token reads the history; an external signer only for dossiers they took part in', async () => {
    const { h, world } = context;
    expect((await get(h, { token: world.lan.token }, '/documents/HD-001/history')).status).toBe(
      200,
    );
    const anh = await accountOf(h, guestAnh.identityNumber);
    const token = await issueToken(h.deps, anh.id, 'partner');
    const own = await data<DossierHistoryBody>(
      await get(h, { token }, '/documents/HD-001/history'),
    );
    expect(own.history).toHaveLength(2);
    const other = await get(h, { token }, '/documents/BB-002/history');
    expect(other.status).toBe(404);
  });

  it('404 for an unknown documentId and for a dossier of another organization or tenant', async () => {
    const { h, world } = context;
    for (const [credential, documentId] of [
      [{ key: world.adminKey }, 'NOPE'],
      [{ key: world.betaKey }, 'HD-001'],
      [{ key: world.hungKtKey }, 'HD-001'],
    ] as const) {
      const response = await get(h, credential, `/documents/${documentId}/history`);
      expect(await errorOf(response)).toEqual([404, 'DOCUMENT_NOT_FOUND', 'documentId']);
    }
  });

  it('answers 403 to a user without document:view', async () => {
    const { h, world } = context;
    await h.deps.db
      .deleteFrom('role_permissions')
      .where('role_id', '=', world.ktRoleId)
      .where('permission', '=', 'document:view')
      .execute();
    expect((await get(h, { key: world.minh.key }, '/documents/HD-001/history')).status).toBe(403);
  });
});
