import net from 'node:net';
import { routes, startHttpsServer, type TestHttpsServer } from '../../../test/support/httpsServer';
import { DomainError } from '../../src/errors/domainError';
import { parseAllowlist } from '../../src/outbound/addressPolicy';
import {
  outboundCodes,
  type SafeRequestOptions,
  safeHttpsRequest,
} from '../../src/outbound/safeFetch';

let server: TestHttpsServer;
const received: { body: string; headers: Record<string, unknown> }[] = [];

beforeAll(async () => {
  server = await startHttpsServer();
  server.route('/hook', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString(), headers: req.headers });
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
    });
  });
});
afterAll(() => server.close());
beforeEach(() => {
  received.length = 0;
  server.connections.length = 0;
});

/** Webhook-like defaults: 10 s, a few KB of answer. */
function webhook(extra: Partial<SafeRequestOptions> = {}): SafeRequestOptions {
  return {
    method: 'POST',
    allowlist: parseAllowlist('127.0.0.1'),
    timeoutMs: 10_000,
    maxResponseBytes: 4096,
    ...extra,
  };
}

async function rejection(promise: Promise<unknown>): Promise<DomainError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof DomainError))
    throw new Error(`expected an DomainError, got ${String(error)}`);
  return error;
}

describe('Outbound HTTPS for webhooks', () => {
  it('POSTs the exact body bytes with the given headers and reads a small answer', async () => {
    const body = Buffer.from('{"a":1,"b":"é"}');
    const response = await safeHttpsRequest(
      server.url('/hook'),
      webhook({
        body,
        headers: { 'Content-Type': 'application/json', 'X-Webhook-Id': 'evt_1' },
      }),
    );
    expect(response.status).toBe(200);
    expect((await response.readAll()).toString()).toBe('ok');
    expect(received[0]?.body).toBe('{"a":1,"b":"é"}');
    expect(received[0]?.headers['content-length']).toBe(String(body.length));
    expect(received[0]?.headers['x-webhook-id']).toBe('evt_1');
    expect(received[0]?.headers.authorization).toBeUndefined();
  });

  it('returns a 3xx as a result and never follows it', async () => {
    const target = await startHttpsServer();
    try {
      target.route('/elsewhere', routes.status(200));
      server.route('/moved', routes.redirect(target.url('/elsewhere'), 301));
      const response = await safeHttpsRequest(
        server.url('/moved'),
        webhook({ body: Buffer.from('{}') }),
      );
      expect(response.status).toBe(301);
      expect(response.headers.location).toBe(target.url('/elsewhere'));
      response.discard();
      expect(target.connections).toHaveLength(0);
    } finally {
      await target.close();
    }
  });

  it('caps the answer body while it streams', async () => {
    const big = routes.stream(10 * 1024 * 1024);
    server.route('/chatty', big.route);
    const response = await safeHttpsRequest(server.url('/chatty'), webhook());
    const error = await rejection(response.readAll());
    expect(error.code).toBe(outboundCodes.tooLarge);
  });

  it('times out after the deadline (10 s for webhooks, shortened here)', async () => {
    server.route('/slow-hook', routes.hang());
    const error = await rejection(
      safeHttpsRequest(server.url('/slow-hook'), webhook({ timeoutMs: 200 })),
    );
    expect(error.code).toBe(outboundCodes.timeout);
  });

  it('keeps the deadline on a body nobody reads, without crashing the process', async () => {
    server.route('/drip-hook', routes.drip(Buffer.alloc(2000, 0x61), 50, 40));
    const response = await safeHttpsRequest(
      server.url('/drip-hook'),
      webhook({ timeoutMs: 200, maxResponseBytes: 100_000 }),
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(response.body.destroyed).toBe(true);
    const error = await rejection(response.readAll());
    expect(error.code).toBe(outboundCodes.timeout);
  });

  it('refuses to send authentication headers', async () => {
    for (const name of ['Authorization', 'proxy-authorization', 'Cookie']) {
      await expect(
        safeHttpsRequest(server.url('/hook'), webhook({ headers: { [name]: 'x' } })),
      ).rejects.toThrow(TypeError);
    }
  });

  it('refuses a header value Node would not send, without sending anything', async () => {
    await expect(
      safeHttpsRequest(server.url('/hook'), webhook({ headers: { 'X-Bad': 'a\r\nInjected: 1' } })),
    ).rejects.toMatchObject({ code: 'ERR_INVALID_CHAR' });
    expect(server.connections).toHaveLength(0);
  });

  it('ignores proxy environment variables', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      HTTPS_PROXY: 'http://127.0.0.1:9',
      https_proxy: 'http://127.0.0.1:9',
      HTTP_PROXY: 'http://127.0.0.1:9',
    });
    try {
      const response = await safeHttpsRequest(server.url('/hook'), webhook());
      expect(response.status).toBe(200);
      response.discard();
    } finally {
      process.env = saved;
    }
  });

  it('refuses a webhook URL on http, and one that points inside, without connecting', async () => {
    const connects = jest.spyOn(net.Socket.prototype, 'connect');
    try {
      const plain = await rejection(
        safeHttpsRequest(server.url('/hook').replace('https:', 'http:'), webhook()),
      );
      expect(plain.code).toBe(outboundCodes.invalidUrl);
      const inside = await rejection(
        safeHttpsRequest(server.url('/hook'), webhook({ allowlist: undefined })),
      );
      expect(inside.code).toBe(outboundCodes.forbiddenAddress);
      expect(connects).not.toHaveBeenCalled();
      expect(server.connections).toHaveLength(0);
    } finally {
      connects.mockRestore();
    }
  });
});
