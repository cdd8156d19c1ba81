import net from 'node:net';
import { routes, startHttpsServer, type TestHttpsServer } from '../../../test/support/httpsServer';
import { DomainError } from '../../src/errors/domainError';
import { type Allowlist, parseAllowlist } from '../../src/outbound/addressPolicy';
import {
  OutboundPool,
  outboundCodes,
  type Resolver,
  type SafeRequestOptions,
  safeHttpsRequest,
} from '../../src/outbound/safeFetch';

/**
 * Keep-alive connections through an OutboundPool: reused when they may be, and never a way
 * around the address policy. The test certificate names localhost, files.test and 127.0.0.1.
 */

let server: TestHttpsServer;
const pools: OutboundPool[] = [];

beforeAll(async () => {
  server = await startHttpsServer();
  server.route('/hook', (req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok'));
  });
  server.route('/big', routes.stream(1024 * 1024).route);
  server.route('/hang', routes.hang());
});
afterAll(() => server.close());
beforeEach(() => {
  server.connections.length = 0;
});
afterEach(() => {
  for (const pool of pools.splice(0)) pool.close();
});

/** Every name resolves to 127.0.0.1; the calls are counted. */
function loopbackResolver(): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolver = async (hostname: string) => {
    calls.push(hostname);
    return [{ address: '127.0.0.1', family: 4 as const }];
  };
  return Object.assign(resolver, { calls });
}

function poolFor(allowlist: Allowlist, resolver?: Resolver): OutboundPool {
  const pool = new OutboundPool({ allowlist, ...(resolver ? { resolver } : {}) });
  pools.push(pool);
  return pool;
}

function through(pool: OutboundPool, extra: Partial<SafeRequestOptions> = {}): SafeRequestOptions {
  return {
    method: 'POST',
    body: Buffer.from('{}'),
    allowlist: pool.allowlist,
    resolver: pool.resolver,
    pool,
    timeoutMs: 5_000,
    maxResponseBytes: 4096,
    ...extra,
  };
}

async function text(url: string, options: SafeRequestOptions): Promise<string> {
  const response = await safeHttpsRequest(url, options);
  expect(response.status).toBe(200);
  return (await response.readAll()).toString();
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

const files = (path: string) => `https://files.test:${server.port}${path}`;
const localhost = (path: string) => `https://localhost:${server.port}${path}`;

describe('OutboundPool (keep-alive for safeHttpsRequest)', () => {
  it('sends sequential requests over one TCP connection', async () => {
    const pool = poolFor(parseAllowlist('127.0.0.1'));
    expect(await text(server.url('/hook'), through(pool))).toBe('ok');
    expect(await text(server.url('/hook'), through(pool))).toBe('ok');
    expect(await text(server.url('/hook'), through(pool))).toBe('ok');
    expect(server.connections).toHaveLength(1);
  });

  it('looks a host name up (and checks it) once per connection, not per request', async () => {
    const resolver = loopbackResolver();
    const pool = poolFor(parseAllowlist('files.test'), resolver);
    expect(await text(files('/hook'), through(pool))).toBe('ok');
    expect(await text(files('/hook'), through(pool))).toBe('ok');
    expect(server.connections).toHaveLength(1);
    expect(resolver.calls).toEqual(['files.test']);
  });

  it('opens one-shot connections without a pool', async () => {
    const options = { ...through(poolFor(parseAllowlist('127.0.0.1'))), pool: undefined };
    await text(server.url('/hook'), options);
    await text(server.url('/hook'), options);
    expect(server.connections).toHaveLength(2);
  });

  it('still refuses a forbidden address, without connecting', async () => {
    const pool = poolFor(parseAllowlist(''), loopbackResolver());
    // An IP literal is refused before any socket exists.
    const connects = jest.spyOn(net.Socket.prototype, 'connect');
    try {
      const literal = await rejection(safeHttpsRequest(server.url('/hook'), through(pool)));
      expect(literal.code).toBe(outboundCodes.forbiddenAddress);
      expect(connects).not.toHaveBeenCalled();
    } finally {
      connects.mockRestore();
    }
    // A host name is refused inside the socket's lookup, before the TCP connect.
    const named = await rejection(safeHttpsRequest(localhost('/hook'), through(pool)));
    expect(named.code).toBe(outboundCodes.forbiddenAddress);
    expect(server.connections).toHaveLength(0);
    // The refused socket is destroyed and leaves the pool.
    const refused = Object.values(pool.agent.sockets).flat();
    expect(refused.every((socket) => socket?.destroyed === true)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(Object.values(pool.agent.sockets).flat()).toHaveLength(0);
    expect(Object.values(pool.agent.freeSockets).flat()).toHaveLength(0);
  });

  it('judges a URL once per pool, and keeps refusing one it refused', async () => {
    const allowed = poolFor(parseAllowlist('127.0.0.1'));
    expect(allowed.target(server.url('/hook'))).toBe(allowed.target(server.url('/hook')));
    const refusing = poolFor(parseAllowlist(''));
    for (let i = 0; i < 2; i++) {
      const refused = await rejection(safeHttpsRequest(server.url('/hook'), through(refusing)));
      expect(refused.code).toBe(outboundCodes.forbiddenAddress);
    }
    // A plain http URL is refused by a pool as it is without one.
    const plain = await rejection(
      safeHttpsRequest(`http://127.0.0.1:${server.port}/hook`, through(allowed)),
    );
    expect(plain.code).toBe(outboundCodes.invalidUrl);
  });

  it('refuses a host resolving to a private address while a pooled socket to the same address and port is idle', async () => {
    // files.test is allowlisted by name; localhost resolves to the same 127.0.0.1 but is not.
    const pool = poolFor(parseAllowlist('files.test'), loopbackResolver());
    expect(await text(files('/hook'), through(pool))).toBe('ok');
    expect(Object.values(pool.agent.freeSockets).flat()).toHaveLength(1);

    const error = await rejection(safeHttpsRequest(localhost('/hook'), through(pool)));
    expect(error.code).toBe(outboundCodes.forbiddenAddress);
    expect(server.connections).toHaveLength(1);
    expect(server.requests.at(-1)?.headers.host).toBe(`files.test:${server.port}`);

    // The allowed host still gets its pooled connection.
    expect(await text(files('/hook'), through(pool))).toBe('ok');
    expect(server.connections).toHaveLength(1);
  });

  it('never hands a pooled socket to another host, even at the same address and port', async () => {
    const pool = poolFor(parseAllowlist('127.0.0.1'), loopbackResolver());
    await text(files('/hook'), through(pool));
    await text(localhost('/hook'), through(pool));
    await text(server.url('/hook'), through(pool));
    expect(server.connections).toHaveLength(3);
    await text(localhost('/hook'), through(pool));
    expect(server.connections).toHaveLength(3);
  });

  it('does not reuse a connection whose answer was not read to the end', async () => {
    const pool = poolFor(parseAllowlist('127.0.0.1'));
    const response = await safeHttpsRequest(
      server.url('/big'),
      through(pool, { maxResponseBytes: 2 * 1024 * 1024 }),
    );
    response.discard();
    await new Promise((resolve) => setImmediate(resolve));
    expect(Object.values(pool.agent.freeSockets).flat()).toHaveLength(0);
    await text(server.url('/hook'), through(pool));
    expect(server.connections).toHaveLength(2);
  });

  it('drops the connection of an answer over the cap', async () => {
    const pool = poolFor(parseAllowlist('127.0.0.1'));
    const response = await safeHttpsRequest(server.url('/big'), through(pool));
    expect((await rejection(response.readAll())).code).toBe(outboundCodes.tooLarge);
    await text(server.url('/hook'), through(pool));
    expect(server.connections).toHaveLength(2);
  });

  it('keeps the deadline on a reused connection and drops that connection', async () => {
    const pool = poolFor(parseAllowlist('127.0.0.1'));
    await text(server.url('/hook'), through(pool));
    const error = await rejection(
      safeHttpsRequest(server.url('/hang'), through(pool, { timeoutMs: 200 })),
    );
    expect(error.code).toBe(outboundCodes.timeout);
    expect(server.connections).toHaveLength(1);
    await text(server.url('/hook'), through(pool));
    expect(server.connections).toHaveLength(2);
  });

  it('refuses a pool bound to another allowlist or resolver, and a closed pool', async () => {
    const pool = poolFor(parseAllowlist('127.0.0.1'));
    await expect(
      safeHttpsRequest(
        server.url('/hook'),
        through(pool, { allowlist: parseAllowlist('127.0.0.1') }),
      ),
    ).rejects.toThrow(TypeError);
    await expect(
      safeHttpsRequest(server.url('/hook'), through(pool, { resolver: loopbackResolver() })),
    ).rejects.toThrow(TypeError);
    pool.close();
    await expect(safeHttpsRequest(server.url('/hook'), through(pool))).rejects.toThrow(TypeError);
    expect(server.connections).toHaveLength(0);
  });

  it('close() ends the idle connections', async () => {
    const pool = poolFor(parseAllowlist('127.0.0.1'));
    await text(server.url('/hook'), through(pool));
    const [socket] = Object.values(pool.agent.freeSockets).flat();
    pool.close();
    expect(socket?.destroyed).toBe(true);
  });
});
