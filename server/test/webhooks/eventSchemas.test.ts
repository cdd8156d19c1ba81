import type { z } from '@hono/zod-openapi';
import {
  DocumentCompletedDataSchema,
  DocumentRejectedDataSchema,
  NotificationDataSchema,
  WebhookTestDataSchema,
  webhookEnvelopeSchema,
  webhookEventCatalog,
  webhookHeadersSchema,
} from '../../src/webhooks/eventSchemas';
import type { WebhookEventType } from '../../src/webhooks/events';
import {
  documentCompletedData,
  documentRejectedData,
  notificationData,
  notificationEvents,
  webhookTestData,
} from '../../src/webhooks/payloads';
import { subscribableEvents } from '../../src/webhooks/subscriptions';
import {
  binh,
  completeHdmb,
  type EventSetup,
  envelopeOf,
  eventSetup,
  hdmbDossier,
  rejectAs,
  signAsAnh,
} from '../events/fixtures';
import { accountOf } from '../workflow/world';
import { completedFacts, notificationFacts } from './fixtures';

jest.setTimeout(60_000);

/**
 * The documented schema takes the value as it is, every field documented: parsing strips
 * unknown keys, so an undocumented field would make the parsed value differ.
 */
function expectDocumented<S extends z.ZodType>(schema: S, value: unknown): void {
  const parsed = schema.safeParse(value);
  expect(parsed.error?.issues ?? []).toEqual([]);
  expect(parsed.data).toEqual(value);
}

describe('webhook event schemas of the OpenAPI document', () => {
  it('name the seven events the service sends', () => {
    expect(Object.keys(webhookEventCatalog).sort()).toEqual(
      [...subscribableEvents, 'webhook.test'].sort(),
    );
  });

  it('take the data built by payloads.ts, every variant, field for field', () => {
    const facts = completedFacts('ACME');
    expectDocumented(DocumentCompletedDataSchema, documentCompletedData(facts));
    expectDocumented(
      DocumentRejectedDataSchema,
      documentRejectedData({
        ...facts,
        rejectedAt: '2026-11-25T09:00:00.000Z',
        reason: 'Sai đơn giá',
        rejectedBy: { fullName: 'Bình', email: null, phone: '0987654321', identityNumber: null },
      }),
    );
    for (const kind of notificationEvents) {
      expectDocumented(NotificationDataSchema, notificationData(kind, notificationFacts()));
    }
    expectDocumented(
      WebhookTestDataSchema,
      webhookTestData({
        message: 'Test',
        subscriptionId: '0f8fad5b-d9cb-469f-a165-70867728950e',
        triggeredBy: 'admin',
        metadata: {},
      }),
    );
  });

  describe('and the requests a receiver really gets', () => {
    let s: EventSetup;
    beforeAll(async () => {
      s = await eventSetup();
    });
    afterAll(() => s.close());

    it('every one of the seven events, body and headers, matches its documented schemas', async () => {
      const { h, world, receiver, worker } = s;
      await s.subscribe('/all', [...subscribableEvents]);
      await completeHdmb(world, await hdmbDossier(world, 'HD-OPENAPI-1'));
      const rejected = await hdmbDossier(world, 'HD-OPENAPI-2');
      await signAsAnh(world, rejected.id, rejected.fileIds[0]!);
      await rejectAs(h, rejected.id, (await accountOf(h, binh.phone)).id, 'Sai đơn giá & số');
      const test = await h.request('POST', '/api/integration/webhooks/test', {
        headers: { 'X-API-Key': world.adminKey },
      });
      expect(test.status).toBe(200);
      await worker.drain();

      const requests = receiver.at('/all');
      const seen = new Set<string>();
      for (const request of requests) {
        const type = request.headers['x-webhook-event'] as WebhookEventType;
        seen.add(type);
        expectDocumented(webhookEnvelopeSchema(type), envelopeOf(request));
        const headers = webhookHeadersSchema(type);
        const sent = Object.fromEntries(
          Object.keys(headers.shape).map((name) => [name, request.headers[name.toLowerCase()]]),
        );
        expectDocumented(headers, sent);
      }
      expect([...seen].sort()).toEqual(Object.keys(webhookEventCatalog).sort());
    });
  });
});
