import { inTransaction } from '../../src/db/database';
import { enqueueEvent } from '../../src/webhooks/events';
import {
  documentCompletedData,
  documentRejectedData,
  notificationData,
} from '../../src/webhooks/payloads';
import { disableWebhookSubscription } from '../../src/webhooks/subscriptions';
import { type Harness, type SeededTenant, seedTenant } from '../support/harness';
import {
  completedFacts,
  deliveryRows,
  enqueueCompleted,
  notificationFacts,
  presignedUrl,
  subscribe,
  webhookHarness,
} from './fixtures';

let h: Harness;
let acme: SeededTenant;
beforeEach(async () => {
  h = webhookHarness();
  acme = await seedTenant(h, 'ACME');
});
afterEach(() => h.close());

describe('document.completed data', () => {
  it('has every field of the spec, outside signers only, files with presigned url and ecmNodeUuid', () => {
    const data = documentCompletedData(completedFacts('ACME'));
    expect(data).toEqual({
      documentId: 'HD-2026-001',
      documentUuid: '0c8f3e8e-4a55-4b8f-9d0e-5c7a3c2b1a00',
      documentTitle: 'Hợp đồng lao động <2026> & phụ lục',
      transactionId: 'TX-1',
      status: 'COMPLETED',
      completedAt: '2026-11-25T09:00:00.000Z',
      files: [
        {
          type: 'signed_document',
          url: presignedUrl,
          expiresAt: '2026-11-26T08:00:00.000Z',
          name: 'Hợp đồng.pdf',
          mimeType: 'application/pdf',
          sizeBytes: 48213,
          ecmNodeUuid: '5b0f4a52-2f8e-4c1e-9c38-0d7d3d1b1e11',
          ecmClassCode: 'HDLD',
        },
        {
          type: 'input_document',
          url: `${presignedUrl}&x=2`,
          expiresAt: '2026-11-26T08:00:00.000Z',
          name: 'CCCD.pdf',
          mimeType: 'application/pdf',
          sizeBytes: 1200,
          ecmNodeUuid: '7a1c9d3e-0000-4000-8000-000000000002',
          ecmClassCode: null,
        },
      ],
      signedCount: 3,
      totalSigners: 1,
      signers: [
        {
          stepName: 'Người lao động ký',
          stepCode: 'EMPLOYEE',
          email: 'an.nguyen@example.com',
          identityNumber: '001203004567',
          status: 'SIGNED',
          signedAt: '2026-11-25T08:30:00.000Z',
        },
      ],
      metadata: { contractNo: 'C-77', tenantCode: 'ACME' },
    });
  });
});

describe('document.rejected data', () => {
  it('has the same fields plus rejectedAt, reason and rejectedBy; no signed file; null signedAt for the rejecter', () => {
    const facts = completedFacts('ACME');
    const signers = [
      ...facts.signers,
      {
        stepKind: 'phone_guest' as const,
        stepName: 'Bên B ký',
        stepCode: 'PARTY_B',
        email: null,
        phone: '0912345678',
        identityNumber: null,
        taxCode: '0101234567-001',
        status: 'REJECTED' as const,
        signedAt: '2026-11-25T08:55:00.000Z',
      },
    ];
    const data = documentRejectedData({
      ...facts,
      signers,
      rejectedAt: '2026-11-25T08:55:00.000Z',
      reason: 'Sai số tiền',
      rejectedBy: {
        fullName: 'Trần Thị Bình',
        email: null,
        phone: '0912345678',
        identityNumber: null,
      },
    });
    expect(data.status).toBe('REJECTED');
    expect(data.completedAt).toBeNull();
    expect(data.rejectedAt).toBe('2026-11-25T08:55:00.000Z');
    expect(data.reason).toBe('Sai số tiền');
    expect(data.rejectedBy).toEqual({
      fullName: 'Trần Thị Bình',
      email: null,
      phone: '0912345678',
      identityNumber: null,
    });
    expect(data.files.map((f) => f.type)).toEqual(['input_document', 'input_document']);
    expect(data.totalSigners).toBe(2);
    expect(data.signers[1]).toEqual({
      stepName: 'Bên B ký',
      stepCode: 'PARTY_B',
      email: null,
      phone: '0912345678',
      taxCode: '0101234567-001',
      status: 'REJECTED',
      signedAt: null,
    });
  });
});

describe('notification.* data', () => {
  it('carries recipients with the three credentials variants, phone-only recipients with email null', () => {
    const data = notificationData('notification.task_assigned_external', notificationFacts());
    expect(data.recipients).toEqual([
      {
        type: 'external',
        name: 'Nguyễn Văn An',
        email: 'an.nguyen@example.com',
        phone: '+84901234567',
        credentials: { userName: '001203004567', password: 'Xy7#kq2!' },
      },
      {
        type: 'external',
        name: 'Trần Thị Bình',
        email: null,
        phone: '0912345678',
        credentials: null,
      },
      // Internal recipients always have credentials null, whatever the facts say.
      {
        type: 'internal',
        name: 'Lê Văn Cường',
        email: 'cuong@acme.example',
        phone: null,
        credentials: null,
      },
    ]);
    const withAccount = notificationData('notification.task_assigned_external', {
      ...notificationFacts(),
      recipients: [
        {
          type: 'external',
          name: 'A',
          email: 'a@example.com',
          phone: null,
          credentials: { userName: 'a@example.com', password: null },
        },
      ],
    });
    expect(withAccount.recipients[0]!.credentials).toEqual({
      userName: 'a@example.com',
      password: null,
    });
    expect(Object.keys(data).sort()).toEqual(
      [
        'transactionId',
        'documentId',
        'documentUuid',
        'documentTitle',
        'totalSteps',
        'step',
        'recipients',
        'signUrl',
        'expireAt',
        'prevActorName',
        'completeDate',
        'note',
        'metadata',
      ].sort(),
    );
    expect(data.step).toEqual({ stepCode: 'EMPLOYEE', stepName: 'Người lao động ký', order: 2 });
    expect(data.note).toBeNull();
  });

  it('keeps note only in task_rejected and has no step or signUrl in process_finished', () => {
    expect(notificationData('notification.task_rejected', notificationFacts()).note).toBe(
      'Sai thông tin',
    );
    const finished = notificationData('notification.process_finished', notificationFacts());
    expect(finished.step).toBeNull();
    expect(finished.signUrl).toBeNull();
    expect(finished.note).toBeNull();
    expect(finished.totalSteps).toBe(3);
  });
});

describe('Outbox: enqueueEvent', () => {
  it('stores the envelope once as canonical bytes: compact, keys sorted, & literal', async () => {
    await subscribe(h, 'ACME', 'https://127.0.0.1:9/hook');
    const { eventId, deliveries } = await enqueueCompleted(h, acme);
    expect(deliveries).toBe(1);
    expect(eventId).toMatch(
      /^evt_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    const event = await h.deps.db
      .selectFrom('webhook_events')
      .selectAll()
      .where('id', '=', eventId!)
      .executeTakeFirstOrThrow();
    const text = event.body.toString('utf8');
    expect(text.startsWith(`{"createdAt":"2026-11-25T08:00:00.000Z","data":{"completedAt":`)).toBe(
      true,
    );
    expect(text.endsWith(`},"id":"${eventId}","type":"document.completed"}`)).toBe(true);
    expect(text).toContain(`"url":"${presignedUrl}"`);
    expect(text).toContain('?expires=1764144000&signature=ab12cd34');
    expect(text).not.toContain('\\u0026');
    expect(text).toContain('Hợp đồng lao động <2026> & phụ lục');
    expect(text).not.toMatch(/\s"|":\s|,\s"/);
    expect(JSON.parse(text)).toEqual({
      id: eventId,
      type: 'document.completed',
      createdAt: '2026-11-25T08:00:00.000Z',
      data: documentCompletedData(completedFacts('ACME')),
    });
  });

  it('fans out to every active subscription whose list matches; notification.* only when listed', async () => {
    const both = await subscribe(h, 'ACME', 'https://127.0.0.1:9/a'); // defaults: document.*
    const notifying = await subscribe(h, 'ACME', 'https://127.0.0.1:9/b', [
      'document.completed',
      'notification.task_assigned_external',
    ]);
    const rejectedOnly = await subscribe(h, 'ACME', 'https://127.0.0.1:9/c', ['document.rejected']);
    const disabled = await subscribe(h, 'ACME', 'https://127.0.0.1:9/d');
    await disableWebhookSubscription(h.deps, disabled.id);
    const other = await seedTenant(h, 'OTHER');
    await subscribe(h, 'OTHER', 'https://127.0.0.1:9/e');

    const completed = await enqueueCompleted(h, acme);
    expect(completed.deliveries).toBe(2);
    const notified = await inTransaction(h.deps.db, (trx) =>
      enqueueEvent(trx, h.deps, {
        tenantId: acme.tenantId,
        organizationId: acme.rootOrganizationId,
        type: 'notification.task_assigned_external',
        data: notificationData('notification.task_assigned_external', notificationFacts()),
      }),
    );
    expect(notified.deliveries).toBe(1);
    const internal = await inTransaction(h.deps.db, (trx) =>
      enqueueEvent(trx, h.deps, {
        tenantId: acme.tenantId,
        organizationId: acme.rootOrganizationId,
        type: 'notification.task_assigned_internal',
        data: notificationData('notification.task_assigned_internal', notificationFacts()),
      }),
    );
    expect(internal).toEqual({ eventId: null, deliveries: 0 });

    const rows = await deliveryRows(h.deps);
    const pairs = (list: (string | null)[][]) => list.map((pair) => pair.join(' ')).sort();
    expect(pairs(rows.map((r) => [r.event_id, r.subscription_id]))).toEqual(
      pairs([
        [completed.eventId, both.id],
        [completed.eventId, notifying.id],
        [notified.eventId, notifying.id],
      ]),
    );
    expect(rows.every((r) => r.status === 'pending' && r.attempts === 0)).toBe(true);
    expect(rows.every((r) => r.max_attempts === 6 && r.next_attempt_at === h.now())).toBe(true);
    expect(rows.some((r) => r.subscription_id === rejectedOnly.id)).toBe(false);
    expect(other.tenantId).not.toBe(acme.tenantId);
  });

  it('commits or rolls back with the business write', async () => {
    await subscribe(h, 'ACME', 'https://127.0.0.1:9/hook');
    await expect(
      inTransaction(h.deps.db, async (trx) => {
        await trx
          .updateTable('tenants')
          .set({ name: 'Renamed' })
          .where('id', '=', acme.tenantId)
          .execute();
        await enqueueEvent(trx, h.deps, {
          tenantId: acme.tenantId,
          organizationId: acme.rootOrganizationId,
          type: 'document.completed',
          data: documentCompletedData(completedFacts('ACME')),
        });
        throw new Error('the business write failed after the event was queued');
      }),
    ).rejects.toThrow('the business write failed');
    expect(await h.deps.db.selectFrom('webhook_events').selectAll().execute()).toEqual([]);
    expect(await deliveryRows(h.deps)).toEqual([]);
    const tenant = await h.deps.db
      .selectFrom('tenants')
      .select('name')
      .where('id', '=', acme.tenantId)
      .executeTakeFirstOrThrow();
    expect(tenant.name).toBe('Tenant ACME');

    await enqueueCompleted(h, acme);
    expect(await deliveryRows(h.deps)).toHaveLength(1);
  });

  it('refuses data JSON cannot carry, so the caller rolls back instead of sending something else', async () => {
    await subscribe(h, 'ACME', 'https://127.0.0.1:9/hook');
    await expect(
      inTransaction(h.deps.db, (trx) =>
        enqueueEvent(trx, h.deps, {
          tenantId: acme.tenantId,
          organizationId: acme.rootOrganizationId,
          type: 'document.completed',
          data: { signedCount: Number.NaN },
        }),
      ),
    ).rejects.toThrow('is not a finite number');
    expect(await deliveryRows(h.deps)).toEqual([]);
  });
});
