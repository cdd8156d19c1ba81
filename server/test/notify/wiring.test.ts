import { inTransaction } from '../../src/db/database';
import { queueNotification } from '../../src/notify/notifications';
import { tenantByCode } from '../../src/tenancy/resolveTenant';
import { enqueueEvent } from '../../src/webhooks/events';
import { type NotificationEvent, notificationData } from '../../src/webhooks/payloads';
import { createWebhookSubscription } from '../../src/webhooks/subscriptions';
import { createHarness, type Harness, type SeededTenant, seedTenant } from '../support/harness';
import { externalRecipient, internalRecipient, sampleData } from './support';

/**
 * The recipe the workflow follows for a `notification.*` event: one data object, the webhook
 * event (which says whether a subscription took it), then the e-mails the service still sends,
 * all in the workflow's transaction.
 */
describe('one notification.* data object feeds the delegated webhook and the e-mails', () => {
  let h: Harness;
  let tenant: SeededTenant;
  beforeEach(async () => {
    h = createHarness();
    tenant = await seedTenant(h, 'ACME');
    await createWebhookSubscription(h.deps, await tenantByCode(h.deps.db, 'ACME'), {
      organizationCode: 'ACME',
      url: 'https://hooks.partner.example/esign',
      events: ['document.completed', 'notification.task_assigned_external'],
    });
  });
  afterEach(() => h.close());

  const recipients = [
    internalRecipient(),
    externalRecipient({ credentials: { userName: 'anh.nguyen', password: 'Xy7&pw' } }),
  ];

  async function emit(event: NotificationEvent, fail = false) {
    return inTransaction(h.deps.db, async (trx) => {
      const data = notificationData(event, { ...sampleData(), recipients });
      const { deliveries } = await enqueueEvent(trx, h.deps, {
        tenantId: tenant.tenantId,
        organizationId: tenant.rootOrganizationId,
        type: event,
        data,
      });
      const outcome = await queueNotification(trx, h.deps, {
        tenantId: tenant.tenantId,
        event,
        data,
        delegatedByWebhook: deliveries > 0,
      });
      if (fail) throw new Error('the workflow step failed');
      return { deliveries, outcome };
    });
  }

  const mailRecipients = async () =>
    (
      await h.deps.db
        .selectFrom('notify_outbox')
        .select(['recipient', 'kind'])
        .orderBy('id')
        .execute()
    ).map((row) => `${row.kind} → ${row.recipient}`);

  it('a subscribed event: the webhook carries the external recipient, the service mails only the internal one', async () => {
    const { deliveries, outcome } = await emit('notification.task_assigned_external');
    expect(deliveries).toBe(1);
    expect(outcome.skipped).toEqual([
      { recipientName: 'Nguyễn Văn Ánh', reason: 'delegated_to_webhook' },
    ]);
    expect(await mailRecipients()).toEqual(['task_assigned_external → binh.tran@company.example']);
  });

  it('an event no subscription takes: the service mails everyone', async () => {
    const { deliveries } = await emit('notification.task_rejected');
    expect(deliveries).toBe(0);
    expect(await mailRecipients()).toEqual([
      'task_rejected → binh.tran@company.example',
      'task_rejected → anh.nguyen@partner.example',
    ]);
  });

  it('when the workflow transaction fails, neither the webhook event nor any e-mail remains', async () => {
    await expect(emit('notification.task_assigned_external', true)).rejects.toThrow(
      'the workflow step failed',
    );
    expect(await mailRecipients()).toEqual([]);
    expect(await h.deps.db.selectFrom('webhook_events').selectAll().execute()).toEqual([]);
  });
});
