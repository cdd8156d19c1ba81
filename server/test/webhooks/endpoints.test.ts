import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { testTls } from '../../../test/support/httpsServer';
import {
  signatureMatches,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../../../test/support/webhookReceiver';
import { issueToken } from '../../src/auth/tokens';
import { sandboxLimits } from '../../src/webhooks/sandboxReceiver';
import { disableWebhookSubscription } from '../../src/webhooks/subscriptions';
import { sendWebhookTest } from '../../src/webhooks/testEvent';
import { startWebhookWorker } from '../../src/webhooks/worker';
import { runCli } from '../admin/runCli';
import { errorOf, orgKey, tenantUser } from '../auth/fixtures';
import {
  globalKey,
  type Harness,
  readJson,
  type SeededTenant,
  seedTenant,
} from '../support/harness';
import { attemptRows, deliveryRows, subscribe, webhookHarness } from './fixtures';

jest.setTimeout(60_000);

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(() => receiver.close());

let h: Harness;
let acme: SeededTenant;
beforeEach(async () => {
  receiver.received.length = 0;
  h = webhookHarness();
  acme = await seedTenant(h, 'ACME');
});
afterEach(() => h.close());

interface TestResult {
  subscriptionId: string;
  url: string;
  httpStatus: number;
  latencyMs: number;
  requestPayload: { id: string; type: string; createdAt: string; data: Record<string, unknown> };
  requestHeaders: Record<string, string>;
  responseBody: string;
  success: boolean;
}
interface TestEnvelope {
  statusCode: number;
  message: string;
  data: { total: number; results: TestResult[] };
  timestamp: string;
}

const webhookTest = (headers: Record<string, string>) =>
  h.request('POST', '/api/integration/webhooks/test', { headers });

describe('Endpoint 17: POST /api/integration/webhooks/test', () => {
  it('sends one webhook.test to each active subscription, bypassing the event filter, and reports each result', async () => {
    receiver.answer('/down', { status: 500, body: 'broken' });
    const first = await subscribe(h, 'ACME', receiver.url('/ok'));
    const second = await subscribe(h, 'ACME', receiver.url('/down'), [
      'notification.task_rejected',
    ]);
    const off = await subscribe(h, 'ACME', receiver.url('/off'));
    await disableWebhookSubscription(h.deps, off.id);

    const response = await webhookTest({ 'X-API-Key': acme.orgKey });
    expect(response.status).toBe(200);
    const body = await readJson<TestEnvelope>(response);
    expect(body).toMatchObject({ statusCode: 200, timestamp: h.now() });
    expect(body.data.total).toBe(2);
    const byId = new Map(body.data.results.map((r) => [r.subscriptionId, r]));
    const ok = byId.get(first.id)!;
    const down = byId.get(second.id)!;

    expect(ok).toMatchObject({
      url: receiver.url('/ok'),
      httpStatus: 200,
      responseBody: 'ok',
      success: true,
    });
    expect(ok.latencyMs).toEqual(expect.any(Number));
    expect(ok.requestPayload).toEqual({
      id: ok.requestHeaders['X-Webhook-Id'],
      type: 'webhook.test',
      createdAt: h.now(),
      data: {
        message: 'Test event from ESign: verify the signature and answer 2xx.',
        subscriptionId: first.id,
        triggeredBy: acme.adminUsername,
        metadata: { tenantCode: 'ACME', organizationCode: 'ACME' },
      },
    });
    expect(ok.requestHeaders).toEqual({
      'Content-Type': 'application/json',
      'User-Agent': 'ESign-Webhook/1.0',
      'X-Webhook-Event': 'webhook.test',
      'X-Webhook-Id': expect.stringMatching(/^evt_test_[0-9a-f-]{36}$/),
      'X-Webhook-Signature': expect.stringMatching(/^sha256=[0-9a-f]{64}$/),
      'X-Webhook-Timestamp': String(Math.floor(h.clock.now().getTime() / 1000)),
    });
    expect(JSON.stringify(body)).not.toContain(first.secret);
    expect(down).toMatchObject({ httpStatus: 500, responseBody: 'broken', success: false });

    // Each subscription received exactly its own event, signed with its own secret.
    const [atOk] = receiver.at('/ok');
    const [atDown] = receiver.at('/down');
    expect(receiver.at('/ok')).toHaveLength(1);
    expect(receiver.at('/down')).toHaveLength(1);
    expect(receiver.at('/off')).toHaveLength(0);
    expect(atOk!.headers['x-webhook-id']).toBe(ok.requestHeaders['X-Webhook-Id']);
    expect(atOk!.headers['x-webhook-signature']).toBe(ok.requestHeaders['X-Webhook-Signature']);
    expect(
      signatureMatches(atOk!.raw, atOk!.headers['x-webhook-signature'] as string, first.secret),
    ).toBe(true);
    expect(
      signatureMatches(
        atDown!.raw,
        atDown!.headers['x-webhook-signature'] as string,
        second.secret,
      ),
    ).toBe(true);
    expect(JSON.parse(atDown!.raw.toString('utf8')).data.subscriptionId).toBe(second.id);

    // Recorded like any delivery, and never retried.
    const rows = await deliveryRows(h.deps);
    expect(
      rows.map((r) => [r.subscription_id, r.status, r.attempts, r.max_attempts]).sort(),
    ).toEqual(
      [
        [first.id, 'delivered', 1, 1],
        [second.id, 'failed', 1, 1],
      ].sort(),
    );
    const failed = rows.find((r) => r.status === 'failed')!;
    expect(await attemptRows(h.deps, failed.id)).toMatchObject([
      { number: 1, http_status: 500, error: 'HTTP 500', response_excerpt: 'broken' },
    ]);
    const worker = startWebhookWorker(h.deps, { poll: false });
    h.clock.advance(2 * 3_600_000);
    await worker.drain();
    await worker.stop();
    expect(receiver.at('/down')).toHaveLength(1);
  });

  it('reports httpStatus 0 when the receiver does not answer within the default 10 000 ms', async () => {
    receiver.answer('/slow', { hang: true });
    await subscribe(h, 'ACME', receiver.url('/slow'));
    const principal = {
      kind: 'apiKey' as const,
      keyId: 1,
      keyKind: 'organization' as const,
      tenantId: acme.tenantId,
      organizationId: acme.rootOrganizationId,
      actor: {
        id: acme.adminUserId,
        tenantId: acme.tenantId,
        username: acme.adminUsername,
        isSuperAdmin: false,
      },
    };
    const report = await sendWebhookTest(h.deps, principal);
    expect(report.results[0]).toMatchObject({ httpStatus: 0, success: false, responseBody: '' });
    // The deadline is a lower bound of the latency: it cannot end sooner.
    expect(report.results[0]!.latencyMs).toBeGreaterThanOrEqual(9_990);
    const [delivery] = await deliveryRows(h.deps);
    expect(delivery).toMatchObject({
      status: 'failed',
      last_http_status: 0,
      last_error: 'OUTBOUND_TIMEOUT: No complete answer within 10000 ms',
    });
  });

  it('answers 400 to a global key, 403 to access and partner tokens, 404 without an active subscription', async () => {
    await subscribe(h, 'ACME', receiver.url('/ok'));
    const global = await webhookTest({ 'X-API-Key': await globalKey(h) });
    expect(global.status).toBe(400);
    expect(await errorOf(global)).toEqual({
      statusCode: 400,
      message:
        'The webhook test needs an organization API key; a global key belongs to no organization',
      error: 'Bad Request',
      code: 'ORGANIZATION_KEY_REQUIRED',
    });
    const boundGlobal = await webhookTest({ 'X-API-Key': await globalKey(h, acme.adminUserId) });
    expect(boundGlobal.status).toBe(400);

    const tokenHeaders: Record<string, string>[] = [
      { Authorization: `Bearer ${await issueToken(h.deps, acme.adminUserId, 'access')}` },
      { 'x-access-token': await issueToken(h.deps, acme.adminUserId, 'partner') },
    ];
    for (const headers of tokenHeaders) {
      const response = await webhookTest(headers);
      expect(response.status).toBe(403);
      expect(await errorOf(response)).toMatchObject({ statusCode: 403, code: 'FORBIDDEN' });
    }

    const clerk = await tenantUser(h, acme, { username: 'clerk' });
    const clerkKey = await orgKey(h, acme, { userId: clerk.id });
    const forbidden = await webhookTest({ 'X-API-Key': clerkKey.key });
    expect(forbidden.status).toBe(403);
    expect(await errorOf(forbidden)).toMatchObject({
      message: 'Forbidden: insufficient permissions',
      code: 'FORBIDDEN',
    });

    const beta = await seedTenant(h, 'BETA');
    const none = await webhookTest({ 'X-API-Key': beta.orgKey });
    expect(none.status).toBe(404);
    expect(await errorOf(none)).toMatchObject({
      statusCode: 404,
      code: 'WEBHOOK_SUBSCRIPTION_NOT_FOUND',
    });
    expect(receiver.received).toHaveLength(0);
    expect(await deliveryRows(h.deps)).toEqual([]);
  });
});

describe('Endpoint 18: POST /api/webhook-test/{tag}', () => {
  const post = (tag: string, body: string | undefined, headers: Record<string, string> = {}) =>
    Promise.resolve(
      h.app.request(
        `/api/webhook-test/${tag}`,
        { method: 'POST', headers, ...(body === undefined ? {} : { body }) },
        { incoming: { socket: { remoteAddress: '203.0.113.9' } } },
      ),
    );

  it('records headers and body of anything sent and always answers 201', async () => {
    const json = await post('onboarding-acme', '{"hello":"xin chào"}', {
      'content-type': 'application/json',
      'x-webhook-id': 'evt_test_1',
      'x-api-key': 'esk_should_not_be_kept',
    });
    expect(json.status).toBe(201);
    expect(await json.json()).toMatchObject({
      statusCode: 201,
      data: { tag: 'onboarding-acme', receivedAt: h.now(), bodyBytes: 21, truncated: false },
    });
    for (const [body, headers] of [
      ['not json at all', { 'content-type': 'text/plain' }],
      [undefined, {}],
      ['\u0000\u0001binary', { 'content-type': 'application/octet-stream' }],
      ['{"broken":', { 'content-type': 'application/json' }],
    ] as [string | undefined, Record<string, string>][]) {
      expect((await post('onboarding-acme', body, headers)).status).toBe(201);
    }

    const cli = await runCli(h.dataDir, 'webhook received --tag onboarding-acme --limit 5 --json');
    expect(cli.code).toBe(0);
    const { requests } = cli.json<{
      requests: { tag: string; headers: Record<string, string>; body: string; bodyBytes: number }[];
    }>();
    expect(requests).toHaveLength(5);
    const first = requests[4]!;
    expect(first).toMatchObject({
      tag: 'onboarding-acme',
      body: '{"hello":"xin chào"}',
      bodyBytes: 21,
      remoteAddress: '203.0.113.9',
    });
    expect(first.headers['x-webhook-id']).toBe('evt_test_1');
    expect(first.headers['x-api-key']).toBe('[redacted]');
    expect(requests[0]!.body).toBe('{"broken":');

    const text = await runCli(h.dataDir, 'webhook received --tag onboarding-acme --limit 5');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('tag onboarding-acme from 203.0.113.9, 21 bytes');
    expect(text.stdout).toContain('  x-webhook-id: evt_test_1');
    expect(text.stdout).toContain('  {"hello":"xin chào"}');
    expect(text.stdout).not.toContain('esk_should_not_be_kept');
  });

  it('keeps at most 64 KiB of a body and the last 20 requests of a tag', async () => {
    const big = 'x'.repeat(1024 * 1024);
    const response = await post('big', big, { 'content-type': 'text/plain' });
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({
      data: { bodyBytes: 1024 * 1024, truncated: true },
    });
    const stored = await h.deps.db
      .selectFrom('webhook_test_requests')
      .selectAll()
      .where('tag', '=', 'big')
      .executeTakeFirstOrThrow();
    expect(stored.body.length).toBe(sandboxLimits.bodyBytes);
    expect(stored.truncated).toBe(1);

    for (let i = 1; i <= 25; i++) {
      expect((await post('many', `{"n":${i}}`)).status).toBe(201);
    }
    const kept = await h.deps.db
      .selectFrom('webhook_test_requests')
      .select('body')
      .where('tag', '=', 'many')
      .orderBy('id')
      .execute();
    expect(kept.map((row) => row.body.toString())).toEqual(
      Array.from({ length: 20 }, (_, i) => `{"n":${i + 6}}`),
    );
    expect(await h.deps.db.selectFrom('webhook_test_requests').select('id').execute()).toHaveLength(
      21,
    );
  });

  it('receives the service’s own webhook.test end to end (onboarding), and the CLI shows it', async () => {
    // The app itself on real HTTPS (test certificate), as the sandbox host is.
    const server = serve({
      fetch: h.app.fetch,
      hostname: '127.0.0.1',
      port: 0,
      createServer: https.createServer,
      serverOptions: { cert: testTls.cert(), key: testTls.key() },
    });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    try {
      const { port } = server.address() as AddressInfo;
      const { secret } = await subscribe(
        h,
        'ACME',
        `https://127.0.0.1:${port}/api/webhook-test/onboarding-acme`,
      );
      const response = await webhookTest({ 'X-API-Key': acme.orgKey });
      const { data } = await readJson<TestEnvelope>(response);
      expect(data.results[0]).toMatchObject({ httpStatus: 201, success: true });
      expect(JSON.parse(data.results[0]!.responseBody)).toMatchObject({
        statusCode: 201,
        data: { tag: 'onboarding-acme', truncated: false },
      });

      const cli = await runCli(h.dataDir, 'webhook received --tag onboarding-acme --json');
      const [kept] = cli.json<{
        requests: { headers: Record<string, string>; body: string }[];
      }>().requests;
      expect(kept!.headers['x-webhook-id']).toBe(data.results[0]!.requestHeaders['X-Webhook-Id']);
      expect(kept!.headers['user-agent']).toBe('ESign-Webhook/1.0');
      expect(
        signatureMatches(
          Buffer.from(kept!.body, 'utf8'),
          kept!.headers['x-webhook-signature'],
          secret,
        ),
      ).toBe(true);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('limits requests per client address (429 past the normal API limit)', async () => {
    const limited = webhookHarness({ RATE_LIMIT_API: '3' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const answer = await limited.app.request(
          '/api/webhook-test/flood',
          { method: 'POST', body: '{}' },
          { incoming: { socket: { remoteAddress: '198.51.100.7' } } },
        );
        statuses.push(answer.status);
      }
      expect(statuses).toEqual([201, 201, 201, 429]);
      const other = await limited.app.request(
        '/api/webhook-test/flood',
        { method: 'POST', body: '{}' },
        { incoming: { socket: { remoteAddress: '198.51.100.8' } } },
      );
      expect(other.status).toBe(201);
    } finally {
      await limited.close();
    }
  });
});

describe('OpenAPI document', () => {
  it('documents endpoints 17 and 18 with their responses', async () => {
    const document = await readJson<{
      paths: Record<
        string,
        Record<string, { security?: unknown; responses: Record<string, unknown> }>
      >;
    }>(await h.request('GET', '/api/openapi.json'));
    const test = document.paths['/api/integration/webhooks/test']!.post!;
    expect(test.security).toEqual([{ ApiKey: [] }]);
    expect(Object.keys(test.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '408',
      '429',
      '431',
      '503',
    ]);
    const sandbox = document.paths['/api/webhook-test/{tag}']!.post!;
    expect(sandbox.security).toEqual([]);
    expect(Object.keys(sandbox.responses).sort()).toEqual([
      '201',
      '400',
      '408',
      '429',
      '431',
      '503',
    ]);
  });
});
