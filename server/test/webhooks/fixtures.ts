import type { AppDeps } from '../../src/context';
import { inTransaction } from '../../src/db/database';
import { tenantByCode } from '../../src/tenancy/resolveTenant';
import { enqueueEvent } from '../../src/webhooks/events';
import {
  type DossierEventFacts,
  documentCompletedData,
  type NotificationFacts,
} from '../../src/webhooks/payloads';
import { createWebhookSubscription } from '../../src/webhooks/subscriptions';
import { createHarness, type Harness } from '../support/harness';

/** A harness whose outbound requests may reach the local HTTPS receiver. */
export function webhookHarness(env: Record<string, string> = {}): Harness {
  return createHarness({ OUTBOUND_ALLOWLIST: '127.0.0.1', ...env });
}

export async function subscribe(
  h: Harness,
  tenantCode: string,
  url: string,
  events?: string[],
): Promise<{ id: string; secret: string }> {
  const tenant = await tenantByCode(h.deps.db, tenantCode);
  const { subscription, secret } = await createWebhookSubscription(h.deps, tenant, {
    organizationCode: tenantCode,
    url,
    events,
  });
  return { id: subscription.id, secret };
}

/** A presigned URL as files/presign.ts makes them: two query parameters joined by `&`. */
export const presignedUrl =
  'http://127.0.0.1:3000/api/files/5b0f4a52-2f8e-4c1e-9c38-0d7d3d1b1e11?expires=1764144000&signature=ab12cd34';

export function completedFacts(tenantCode: string): DossierEventFacts & { completedAt: string } {
  return {
    documentId: 'HD-2026-001',
    documentUuid: '0c8f3e8e-4a55-4b8f-9d0e-5c7a3c2b1a00',
    documentTitle: 'Hợp đồng lao động <2026> & phụ lục',
    transactionId: 'TX-1',
    signedCount: 3,
    metadata: { contractNo: 'C-77', tenantCode: 'spoofed' },
    tenantCode,
    completedAt: '2026-11-25T09:00:00.000Z',
    files: [
      {
        fileUuid: '5b0f4a52-2f8e-4c1e-9c38-0d7d3d1b1e11',
        kind: 'MAIN',
        name: 'Hợp đồng.pdf',
        mimeType: 'application/pdf',
        sizeBytes: 48213,
        ecmClassCode: 'HDLD',
        url: presignedUrl,
        expiresAt: '2026-11-26T08:00:00.000Z',
        signed: true,
      },
      {
        fileUuid: '7a1c9d3e-0000-4000-8000-000000000002',
        kind: 'ATTACHMENT',
        name: 'CCCD.pdf',
        mimeType: 'application/pdf',
        sizeBytes: 1200,
        ecmClassCode: null,
        url: `${presignedUrl}&x=2`,
        expiresAt: '2026-11-26T08:00:00.000Z',
        signed: false,
      },
    ],
    signers: [
      {
        stepKind: 'internal',
        stepName: 'Trưởng phòng duyệt',
        stepCode: 'APPROVE',
        email: 'boss@acme.example',
        phone: null,
        identityNumber: null,
        taxCode: null,
        status: 'SIGNED',
        signedAt: '2026-11-25T08:10:00.000Z',
      },
      {
        stepKind: 'guest',
        stepName: 'Người lao động ký',
        stepCode: 'EMPLOYEE',
        email: 'an.nguyen@example.com',
        phone: null,
        identityNumber: '001203004567',
        taxCode: null,
        status: 'SIGNED',
        signedAt: '2026-11-25T08:30:00.000Z',
      },
      {
        stepKind: 'role',
        stepName: 'Giám đốc ký',
        stepCode: 'DIRECTOR',
        email: null,
        phone: null,
        identityNumber: null,
        taxCode: null,
        status: 'SIGNED',
        signedAt: '2026-11-25T08:50:00.000Z',
      },
    ],
  };
}

export function notificationFacts(): NotificationFacts {
  return {
    transactionId: 'TX-1',
    documentId: 'HD-2026-001',
    documentUuid: '0c8f3e8e-4a55-4b8f-9d0e-5c7a3c2b1a00',
    documentTitle: 'Hợp đồng lao động',
    totalSteps: 3,
    step: { stepCode: 'EMPLOYEE', stepName: 'Người lao động ký', order: 2 },
    recipients: [
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
      {
        type: 'internal',
        name: 'Lê Văn Cường',
        email: 'cuong@acme.example',
        phone: null,
        credentials: { userName: 'cuong', password: 'should-not-travel' },
      },
    ],
    signUrl: `${presignedUrl}&turn=2`,
    expireAt: '2026-11-25T08:30:00.000Z',
    prevActorName: 'Lê Văn Cường',
    completeDate: null,
    note: 'Sai thông tin',
    metadata: { contractNo: 'C-77' },
  };
}

/** Enqueues a document.completed of `tenantCode`'s root organization in its own transaction. */
export function enqueueCompleted(
  h: Harness,
  tenant: { tenantId: number; code: string; rootOrganizationId: number },
) {
  return inTransaction(h.deps.db, (trx) =>
    enqueueEvent(trx, h.deps, {
      tenantId: tenant.tenantId,
      organizationId: tenant.rootOrganizationId,
      type: 'document.completed',
      data: documentCompletedData(completedFacts(tenant.code)),
    }),
  );
}

/** Deliveries with their job's state under the names the assertions use. */
export async function deliveryRows(deps: AppDeps) {
  const rows = await deps.db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('jobs as j', 'j.id', 'd.job_id')
    .selectAll('d')
    .select([
      'j.status as job_status',
      'j.attempts',
      'j.max_attempts',
      'j.run_at as next_attempt_at',
      'j.lease_id',
      'j.last_error',
      'j.finished_at',
    ])
    .orderBy('d.id')
    .execute();
  return rows.map(({ job_status, ...row }) => ({
    ...row,
    status: job_status === 'done' ? 'delivered' : job_status,
  }));
}

export async function attemptRows(deps: AppDeps, deliveryId: number) {
  return deps.db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', '=', deliveryId)
    .orderBy('number')
    .execute();
}

/** Polls `condition` every 25 ms until it holds; fails after `timeoutMs` with `what()`. */
export async function until(
  condition: () => Promise<boolean> | boolean,
  what: () => string,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
