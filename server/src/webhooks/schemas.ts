import { z } from '@hono/zod-openapi';
import { envelope, isoDateTime } from '../http/openapi';

export const WebhookTestResultSchema = z
  .object({
    subscriptionId: z.string().openapi({ format: 'uuid' }),
    url: z.string(),
    httpStatus: z
      .number()
      .int()
      .openapi({ description: 'Status of the receiver; 0 = no connection or over 10 seconds' }),
    latencyMs: z.number().int(),
    requestPayload: z
      .record(z.string(), z.unknown())
      .openapi({ description: 'The envelope sent: id, type webhook.test, createdAt, data' }),
    requestHeaders: z
      .record(z.string(), z.string())
      .openapi({ description: 'Headers sent, signature included; the secret never' }),
    responseBody: z.string().openapi({ description: 'Start of the answer (at most 4 KiB)' }),
    success: z.boolean().openapi({ description: 'true for a 2xx answer' }),
  })
  .openapi('WebhookTestResult');

export const WebhookTestEnvelope = envelope(
  z
    .object({ total: z.number().int(), results: z.array(WebhookTestResultSchema) })
    .openapi('WebhookTestReport'),
);

export const SandboxTagParam = z.object({
  tag: z.string().openapi({
    param: { name: 'tag', in: 'path' },
    description: 'Any label; requests are kept per tag (the last 20)',
  }),
});

export const SandboxReceiptEnvelope = envelope(
  z
    .object({
      tag: z.string(),
      receivedAt: isoDateTime,
      bodyBytes: z.number().int(),
      truncated: z.boolean().openapi({ description: 'true when the body was over 64 KiB' }),
    })
    .openapi('SandboxReceipt'),
);
