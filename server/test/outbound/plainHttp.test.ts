import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DomainError } from '../../src/errors/domainError';
import { parseAllowlist } from '../../src/outbound/addressPolicy';
import {
  OutboundPool,
  outboundCodes,
  type SafeRequestOptions,
  safeHttpsRequest,
} from '../../src/outbound/safeFetch';

/** Plain HTTP exists for OCSP and CRL fetches only; the address policy and limits stay. */

let server: http.Server;
let base: string;
let connections = 0;
const received: { method: string; body: Buffer; type: string | undefined }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        body: Buffer.concat(chunks),
        type: req.headers['content-type'],
      });
      if (req.url === '/ca.crl') res.writeHead(200).end(Buffer.from([0x30, 0x03, 1, 2, 3]));
      else if (req.url === '/moved') res.writeHead(302, { Location: `${base}/ca.crl` }).end();
      else if (req.url === '/big') res.writeHead(200).end(Buffer.alloc(10_000));
      else if (req.url === '/slow') {
        const late = setTimeout(() => res.writeHead(200).end('late'), 2_000);
        res.on('close', () => clearTimeout(late));
      } else res.writeHead(200).end('answer');
    });
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  received.length = 0;
  connections = 0;
});

function revocationFetch(extra: Partial<SafeRequestOptions> = {}): SafeRequestOptions {
  return {
    allowPlainHttp: true,
    allowlist: parseAllowlist('127.0.0.1'),
    timeoutMs: 5_000,
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

describe('Plain HTTP for signed revocation data', () => {
  it('GETs a CRL over http when the caller allows plain http', async () => {
    const response = await safeHttpsRequest(`${base}/ca.crl`, revocationFetch());
    expect(response.status).toBe(200);
    expect([...(await response.readAll())]).toEqual([0x30, 0x03, 1, 2, 3]);
  });

  it('POSTs an OCSP request body as it is', async () => {
    const body = Buffer.from([0x30, 0x00]);
    const response = await safeHttpsRequest(
      `${base}/ocsp`,
      revocationFetch({
        method: 'POST',
        body,
        headers: { 'Content-Type': 'application/ocsp-request' },
      }),
    );
    expect((await response.readAll()).toString()).toBe('answer');
    expect(received[0]).toEqual({ method: 'POST', body, type: 'application/ocsp-request' });
  });

  it('still refuses http for callers that did not ask for it, without connecting', async () => {
    const error = await rejection(
      safeHttpsRequest(`${base}/ca.crl`, revocationFetch({ allowPlainHttp: undefined })),
    );
    expect(error.code).toBe(outboundCodes.invalidUrl);
    expect(connections).toBe(0);
  });

  it('refuses other schemes', async () => {
    for (const url of ['ftp://127.0.0.1/ca.crl', 'ldap://127.0.0.1/cn=ca', 'file:///etc/passwd']) {
      const error = await rejection(safeHttpsRequest(url, revocationFetch()));
      expect(error.code).toBe(outboundCodes.invalidUrl);
    }
  });

  it('applies the address policy to http: loopback is refused unless allowlisted', async () => {
    const error = await rejection(
      safeHttpsRequest(`${base}/ca.crl`, revocationFetch({ allowlist: parseAllowlist('') })),
    );
    expect(error.code).toBe(outboundCodes.forbiddenAddress);
    const port = new URL(base).port;
    const viaName = await rejection(
      safeHttpsRequest(
        `http://crl.example.test:${port}/ca.crl`,
        revocationFetch({
          allowlist: parseAllowlist(''),
          resolver: async () => [{ address: '127.0.0.1', family: 4 }],
        }),
      ),
    );
    expect(viaName.code).toBe(outboundCodes.forbiddenAddress);
    expect(connections).toBe(0);
  });

  it('returns a redirect without following it', async () => {
    const response = await safeHttpsRequest(`${base}/moved`, revocationFetch());
    expect(response.status).toBe(302);
    response.discard();
    expect(received.map((r) => r.method)).toEqual(['GET']);
  });

  it('caps the body and keeps the deadline', async () => {
    const big = await safeHttpsRequest(`${base}/big`, revocationFetch({ maxResponseBytes: 100 }));
    expect((await rejection(big.readAll())).code).toBe(outboundCodes.tooLarge);
    const slow = await rejection(
      safeHttpsRequest(`${base}/slow`, revocationFetch({ timeoutMs: 200 })),
    );
    expect(slow.code).toBe(outboundCodes.timeout);
  });

  it('reports a closed port as unreachable', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await rejection(safeHttpsRequest(`http://127.0.0.1:${port}/`, revocationFetch()));
    expect(error.code).toBe(outboundCodes.unreachable);
  });

  it('never sends plain http through a keep-alive pool', async () => {
    const allowlist = parseAllowlist('127.0.0.1');
    const pool = new OutboundPool({ allowlist });
    try {
      await expect(
        safeHttpsRequest(`${base}/ca.crl`, revocationFetch({ allowlist, pool })),
      ).rejects.toThrow(TypeError);
    } finally {
      pool.close();
    }
  });
});
