import { z } from '@hono/zod-openapi';
import type { WebhookEventType } from './events';

/**
 * The webhook events as the OpenAPI document's `webhooks` section shows them: the envelope and
 * `data` of each of the seven events (document 1, "Events") and the request headers. The
 * builders of payloads.ts make the data; a test types and parses real payloads against these
 * schemas, so the two cannot drift apart.
 */

const dateTime = z.iso.datetime({ offset: true });

const WebhookFileSchema = z
  .object({
    type: z.string().openapi({
      description:
        'signed_document or input_document today; ignore values you do not know (new ones may come)',
      examples: ['signed_document', 'input_document'],
    }),
    url: z.string().openapi({ description: 'Presigned; use it exactly as parsed from the JSON' }),
    expiresAt: dateTime.openapi({ description: 'When `url` stops working' }),
    name: z.string(),
    mimeType: z.string(),
    sizeBytes: z.number().int().min(0),
    ecmNodeUuid: z.string().openapi({ description: 'The fileUuid of the download endpoint' }),
    ecmClassCode: z.string().nullable(),
  })
  .openapi('WebhookFile');

const WebhookSignerSchema = z
  .object({
    stepName: z.string(),
    stepCode: z.string(),
    email: z.string().nullable(),
    phone: z.string().optional().openapi({ description: 'Signers invited by phone number' }),
    identityNumber: z.string().optional(),
    taxCode: z.string().optional(),
    status: z.enum(['SIGNED', 'REJECTED', 'PENDING']).openapi({
      description: 'PENDING: a turn that never acted (after a rejection)',
    }),
    signedAt: dateTime.nullable().openapi({ description: 'Null unless SIGNED' }),
  })
  .openapi('WebhookSigner', {
    description: 'An outside signer; internal and role steps are left out',
  });

const dossierFields = {
  documentId: z
    .string()
    .openapi({ description: "The caller's dossier code; empty for dossiers made in the web app" }),
  documentUuid: z.string(),
  documentTitle: z.string(),
  transactionId: z.string().nullable(),
  files: z.array(WebhookFileSchema).openapi({ description: 'Main files, then attachments' }),
  signedCount: z.number().int().min(0),
  totalSigners: z.number().int().min(0).openapi({ description: 'Outside signers only' }),
  signers: z.array(WebhookSignerSchema),
  metadata: z
    .record(z.string(), z.unknown())
    .openapi({ description: "The caller's metadata plus tenantCode" }),
};

export const DocumentCompletedDataSchema = z
  .object({
    ...dossierFields,
    status: z.literal('COMPLETED'),
    completedAt: dateTime,
  })
  .openapi('DocumentCompletedData');

export const DocumentRejectedDataSchema = z
  .object({
    ...dossierFields,
    status: z.literal('REJECTED'),
    completedAt: z.null(),
    rejectedAt: dateTime,
    reason: z.string(),
    rejectedBy: z
      .object({
        fullName: z.string().nullable(),
        email: z.string().nullable(),
        phone: z.string().nullable(),
        identityNumber: z.string().nullable(),
      })
      .openapi('WebhookRejectedBy'),
  })
  .openapi('DocumentRejectedData');

const NotificationRecipientSchema = z
  .object({
    type: z.enum(['internal', 'external']),
    name: z.string(),
    email: z.string().nullable().openapi({ description: 'Null for a recipient invited by phone' }),
    phone: z.string().nullable(),
    credentials: z
      .object({
        userName: z.string(),
        password: z
          .string()
          .nullable()
          .openapi({ description: 'Plain text: never log it; null for an existing account' }),
      })
      .nullable()
      .openapi({ description: 'Outside recipients only; null when no account was made' }),
  })
  .openapi('NotificationRecipient');

export const NotificationDataSchema = z
  .object({
    transactionId: z.string().nullable(),
    documentId: z.string().nullable(),
    documentUuid: z.string().nullable(),
    documentTitle: z.string().nullable(),
    totalSteps: z.number().int().min(0),
    step: z
      .object({
        stepCode: z.string(),
        stepName: z.string(),
        order: z.number().int().min(1),
      })
      .nullable()
      .openapi({ description: 'Null for process_finished' }),
    recipients: z.array(NotificationRecipientSchema),
    signUrl: z.string().nullable().openapi({ description: 'Null for process_finished' }),
    expireAt: dateTime.nullable(),
    prevActorName: z.string().nullable(),
    completeDate: dateTime.nullable(),
    note: z
      .string()
      .nullable()
      .openapi({ description: 'The rejection reason; task_rejected only' }),
    metadata: z.record(z.string(), z.unknown()),
  })
  .openapi('NotificationData');

export const WebhookTestDataSchema = z
  .object({
    message: z.string(),
    subscriptionId: z.uuid(),
    triggeredBy: z.string(),
    metadata: z.record(z.string(), z.unknown()),
  })
  .openapi('WebhookTestData');

/** Every event the service sends, with what it is sent for (docs/webhooks.md, section 1). */
export const webhookEventCatalog = {
  'document.completed': {
    operationId: 'documentCompleted',
    summary: 'Every signer has signed (dossier COMPLETED); on by default',
    data: DocumentCompletedDataSchema,
  },
  'document.rejected': {
    operationId: 'documentRejected',
    summary: 'A signer rejected (dossier REJECTED); on by default',
    data: DocumentRejectedDataSchema,
  },
  'notification.task_assigned_internal': {
    operationId: 'notificationTaskAssignedInternal',
    summary: 'An internal staff member is assigned a task; opt-in',
    data: NotificationDataSchema,
  },
  'notification.task_assigned_external': {
    operationId: 'notificationTaskAssignedExternal',
    summary: 'An outside signer is invited; opt-in',
    data: NotificationDataSchema,
  },
  'notification.task_rejected': {
    operationId: 'notificationTaskRejected',
    summary: 'Someone rejected; opt-in',
    data: NotificationDataSchema,
  },
  'notification.process_finished': {
    operationId: 'notificationProcessFinished',
    summary: 'The whole process is finished; opt-in',
    data: NotificationDataSchema,
  },
  'webhook.test': {
    operationId: 'webhookTest',
    summary: 'The test endpoint or the operator; sent once, never retried',
    data: WebhookTestDataSchema,
  },
} as const satisfies Record<
  WebhookEventType,
  { operationId: string; summary: string; data: z.ZodType }
>;

/** The envelope of one event type: the body, as canonical JSON (keys sorted, compact). */
export function webhookEnvelopeSchema(type: WebhookEventType) {
  const { operationId, data } = webhookEventCatalog[type];
  const name = `${operationId[0]!.toUpperCase()}${operationId.slice(1)}Event`;
  return z
    .object({
      createdAt: dateTime.openapi({ description: 'When the event happened' }),
      data,
      id: eventId(type).openapi({ description: 'Equals X-Webhook-Id; the same on every retry' }),
      type: z.literal(type),
    })
    .openapi(name);
}

/** `evt_<uuid>`, `evt_test_<uuid>` for webhook.test (events.ts newEventId). */
function eventId(type: WebhookEventType) {
  return z
    .string()
    .regex(type === 'webhook.test' ? /^evt_test_[0-9a-f-]{36}$/ : /^evt_[0-9a-f-]{36}$/);
}

/** The request headers of a delivery (webhooks/sender.ts). */
export function webhookHeadersSchema(type: WebhookEventType) {
  return z.object({
    'User-Agent': z.string().openapi({
      param: { name: 'User-Agent', in: 'header' },
      description: '<service>-Webhook/1.0',
      example: 'ESign-Webhook/1.0',
    }),
    'X-Webhook-Event': z.literal(type).openapi({
      param: { name: 'X-Webhook-Event', in: 'header' },
      description: 'The event type',
    }),
    'X-Webhook-Id': eventId(type).openapi({
      param: { name: 'X-Webhook-Id', in: 'header' },
      description: 'evt_<uuid> (evt_test_<uuid> for webhook.test); deduplicate on it',
    }),
    'X-Webhook-Signature': z
      .string()
      .regex(/^sha256=[0-9a-f]{64}( sha256=[0-9a-f]{64})?$/)
      .openapi({
        param: { name: 'X-Webhook-Signature', in: 'header' },
        description:
          'sha256=<hex HMAC-SHA256 of the raw body with the subscription secret>; during a secret rotation two values separated by a space, the new secret first',
      }),
    'X-Webhook-Timestamp': z
      .string()
      .regex(/^\d+$/)
      .openapi({
        param: { name: 'X-Webhook-Timestamp', in: 'header' },
        description: 'When this attempt was sent, Unix seconds; not covered by the signature',
      }),
  });
}
