import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  pdfBytes,
  routes,
  startHttpsServer,
  startSilentServer,
  type TestHttpsServer,
} from '../../../test/support/httpsServer';
import { DomainError } from '../../src/errors/domainError';
import { statusOfCode } from '../../src/http/errorStatuses';
import { parseAllowlist } from '../../src/outbound/addressPolicy';
import { type DownloadPdfOptions, downloadPdf } from '../../src/outbound/downloadPdf';
import type { Resolver } from '../../src/outbound/safeFetch';

const field = 'files.0.fileUrl';
const loopbackAllowed = parseAllowlist('127.0.0.1');

let server: TestHttpsServer;
let destination: string;
let socketConnects: jest.SpyInstance;

beforeAll(async () => {
  server = await startHttpsServer();
});
afterAll(() => server.close());

beforeEach(() => {
  destination = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-download-'));
  server.connections.length = 0;
  server.requests.length = 0;
  socketConnects = jest.spyOn(net.Socket.prototype, 'connect');
});
afterEach(() => {
  socketConnects.mockRestore();
  fs.rmSync(destination, { recursive: true, force: true });
});

function options(extra: Partial<DownloadPdfOptions> = {}): DownloadPdfOptions {
  return { destination, allowlist: loopbackAllowed, field, ...extra };
}

/** The DomainError a download fails with. */
async function failure(url: string, extra: Partial<DownloadPdfOptions> = {}): Promise<DomainError> {
  const error = await downloadPdf(url, options(extra)).then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof DomainError))
    throw new Error(`expected an DomainError, got ${String(error)}`);
  return error;
}

function leftovers(): string[] {
  return fs.readdirSync(destination);
}

const resolveTo =
  (...addresses: string[]): Resolver =>
  async () =>
    addresses.map((address) => ({ address, family: net.isIP(address) === 6 ? 6 : 4 }));

describe('fileUrl download: a PDF is fetched', () => {
  it('streams the PDF to a temp file under the destination with its size and SHA-256', async () => {
    const body = pdfBytes(300_000);
    server.route('/contract.pdf', routes.bytes(body, 'application/octet-stream'));
    const result = await downloadPdf(server.url('/contract.pdf?v=1'), options());
    expect(path.dirname(result.path)).toBe(destination);
    expect(result.size).toBe(body.length);
    expect(result.sha256).toBe(crypto.createHash('sha256').update(body).digest('hex'));
    expect(fs.readFileSync(result.path).equals(body)).toBe(true);
    expect(server.requests[0]?.path).toBe('/contract.pdf?v=1');
    // The spy the refusal tests rely on does see real connections.
    expect(socketConnects).toHaveBeenCalledTimes(1);
    expect(server.connections).toHaveLength(1);
  });

  it('sends no authentication headers or cookies', async () => {
    server.route('/plain.pdf', routes.bytes(pdfBytes()));
    await downloadPdf(server.url('/plain.pdf'), options());
    const headers = server.requests[0]?.headers ?? {};
    expect(headers.authorization).toBeUndefined();
    expect(headers.cookie).toBeUndefined();
    expect(headers['proxy-authorization']).toBeUndefined();
  });

  it('connects by host name to the address the resolver gave, checking the certificate for that name', async () => {
    server.route('/named.pdf', routes.bytes(pdfBytes()));
    const result = await downloadPdf(
      `https://files.test:${server.port}/named.pdf`,
      options({ resolver: resolveTo('127.0.0.1') }),
    );
    expect(result.size).toBe(1024);
    expect(server.requests[0]?.headers.host).toBe(`files.test:${server.port}`);
  });

  it('connects to a bracketed IPv6 literal that the allowlist lets through', async () => {
    const v6 = await startHttpsServer('::1');
    try {
      v6.route('/v6.pdf', routes.bytes(pdfBytes()));
      const result = await downloadPdf(
        v6.url('/v6.pdf'),
        options({ allowlist: parseAllowlist('::1') }),
      );
      expect(v6.url('/v6.pdf')).toMatch(/^https:\/\/\[::1\]:\d+\/v6\.pdf$/);
      expect(result.size).toBe(1024);
      expect(v6.connections).toEqual([{ remoteAddress: '::1' }]);
    } finally {
      await v6.close();
    }
  });

  it('accepts a host name that is listed in the allowlist whatever it resolves to', async () => {
    server.route('/listed.pdf', routes.bytes(pdfBytes()));
    const result = await downloadPdf(
      `https://files.test:${server.port}/listed.pdf`,
      options({ allowlist: parseAllowlist('files.test'), resolver: resolveTo('127.0.0.1') }),
    );
    expect(result.size).toBe(1024);
  });
});

describe('fileUrl checks: HTTPS, well formed', () => {
  it.each([
    ['http scheme', () => server.url('/x.pdf').replace('https:', 'http:')],
    ['ftp scheme', () => 'ftp://127.0.0.1/x.pdf'],
    ['relative URL', () => '/x.pdf'],
    ['garbage', () => 'not a url'],
    ['credentials in the URL', () => server.url('/x.pdf').replace('https://', 'https://u:p@')],
  ])('refuses a URL with %s as 400 FILE_URL_INVALID before any connection', async (_name, url) => {
    const error = await failure(url());
    expect(statusOfCode(error.code)).toBe(400);
    expect(error.code).toBe('FILE_URL_INVALID');
    expect(error.field).toBe(field);
    expect(socketConnects).not.toHaveBeenCalled();
    expect(server.connections).toHaveLength(0);
  });
});

describe('fileUrl checks: must not point into internal IP ranges', () => {
  const port = () => server.port;
  it.each([
    ['loopback literal', () => `https://127.0.0.1:${port()}/x.pdf`],
    ['loopback 127.0.0.2', () => `https://127.0.0.2:${port()}/x.pdf`],
    ['IPv6 loopback', () => `https://[::1]:${port()}/x.pdf`],
    ['IPv4-mapped loopback', () => `https://[::ffff:127.0.0.1]:${port()}/x.pdf`],
    ['IPv4-mapped loopback in hex', () => `https://[::ffff:7f00:1]:${port()}/x.pdf`],
    ['loopback as one decimal number', () => `https://2130706433:${port()}/x.pdf`],
    ['loopback in hex parts', () => `https://0x7f.0.0.1:${port()}/x.pdf`],
    ['private 10/8', () => `https://10.1.2.3:${port()}/x.pdf`],
    ['cloud metadata', () => 'https://169.254.169.254/latest/meta-data/'],
    ['CGNAT', () => `https://100.64.1.1:${port()}/x.pdf`],
    ['multicast', () => `https://224.0.0.1:${port()}/x.pdf`],
    ['NAT64 of a private address', () => `https://[64:ff9b::a00:1]:${port()}/x.pdf`],
    ['unspecified', () => `https://0.0.0.0:${port()}/x.pdf`],
  ])('refuses a %s as 400 FILE_URL_FORBIDDEN_ADDRESS without connecting', async (_name, url) => {
    const error = await failure(url(), { allowlist: parseAllowlist('') });
    expect(statusOfCode(error.code)).toBe(400);
    expect(error.code).toBe('FILE_URL_FORBIDDEN_ADDRESS');
    expect(error.field).toBe(field);
    expect(socketConnects).not.toHaveBeenCalled();
    expect(server.connections).toHaveLength(0);
    expect(leftovers()).toEqual([]);
  });

  it('refuses 127.0.0.1 with an empty allowlist although the server is there', async () => {
    server.route('/there.pdf', routes.bytes(pdfBytes()));
    const error = await failure(server.url('/there.pdf'), { allowlist: undefined });
    expect(error.code).toBe('FILE_URL_FORBIDDEN_ADDRESS');
    expect(server.connections).toHaveLength(0);
  });

  it('refuses a host name that resolves to loopback (localhost, system resolver)', async () => {
    server.route('/local.pdf', routes.bytes(pdfBytes()));
    const error = await failure(`https://localhost:${server.port}/local.pdf`, {
      allowlist: parseAllowlist(''),
    });
    expect(error.code).toBe('FILE_URL_FORBIDDEN_ADDRESS');
    expect(error.message).not.toContain('127.0.0.1');
    expect(server.connections).toHaveLength(0);
  });

  it('refuses a host name when ANY of its addresses is refused, even if another is allowed', async () => {
    server.route('/mixed.pdf', routes.bytes(pdfBytes()));
    const lookups: string[] = [];
    const resolver: Resolver = async (hostname) => {
      lookups.push(hostname);
      return resolveTo('127.0.0.1', '10.0.0.7')(hostname);
    };
    const error = await failure(`https://files.test:${server.port}/mixed.pdf`, { resolver });
    expect(error.code).toBe('FILE_URL_FORBIDDEN_ADDRESS');
    expect(lookups).toEqual(['files.test']);
    expect(server.connections).toHaveLength(0);
  });

  it('refuses a host name resolving to an IPv6 link-local or mapped address', async () => {
    for (const address of ['fe80::1', '::ffff:169.254.169.254', '::1']) {
      const error = await failure(`https://files.test:${server.port}/x.pdf`, {
        resolver: resolveTo(address),
      });
      expect(error.code).toBe('FILE_URL_FORBIDDEN_ADDRESS');
    }
    expect(server.connections).toHaveLength(0);
  });

  it('resolves a name once: the address checked is the address connected to (DNS rebinding)', async () => {
    server.route('/rebind.pdf', routes.bytes(pdfBytes()));
    const answers = [['127.0.0.1'], ['10.0.0.1']];
    let calls = 0;
    const resolver: Resolver = async (hostname) => resolveTo(...(answers[calls++] ?? []))(hostname);
    const result = await downloadPdf(
      `https://files.test:${server.port}/rebind.pdf`,
      options({ resolver }),
    );
    expect(result.size).toBe(1024);
    expect(calls).toBe(1);
    expect(server.connections).toEqual([{ remoteAddress: '127.0.0.1' }]);
  });
});

describe('fileUrl checks: no redirect', () => {
  it('does not follow a redirect: 502 FILE_URL_REDIRECT and the target is never asked', async () => {
    const target = await startHttpsServer();
    try {
      target.route('/real.pdf', routes.bytes(pdfBytes()));
      server.route('/moved.pdf', routes.redirect(target.url('/real.pdf'), 302));
      server.route('/moved-perm.pdf', routes.redirect(target.url('/real.pdf'), 301));
      for (const route of ['/moved.pdf', '/moved-perm.pdf']) {
        const error = await failure(server.url(route));
        expect(statusOfCode(error.code)).toBe(502);
        expect(error.code).toBe('FILE_URL_REDIRECT');
        expect(error.field).toBe(field);
      }
      expect(target.connections).toHaveLength(0);
      expect(leftovers()).toEqual([]);
    } finally {
      await target.close();
    }
  });

  it('answers any status but 200 with 502 FILE_URL_HTTP_STATUS', async () => {
    server.route('/missing.pdf', routes.status(404));
    server.route('/auth.pdf', routes.status(401, { 'WWW-Authenticate': 'Basic' }));
    server.route('/partial.pdf', routes.status(206));
    for (const route of ['/missing.pdf', '/auth.pdf', '/partial.pdf']) {
      const error = await failure(server.url(route));
      expect(statusOfCode(error.code)).toBe(502);
      expect(error.code).toBe('FILE_URL_HTTP_STATUS');
    }
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe('fileUrl checks: under 50 MB', () => {
  const cap = 1024 * 1024;

  it('defaults to 50 MiB and 30 seconds', () => {
    const { fileUrlLimits } = jest.requireActual('../../src/outbound/downloadPdf');
    expect(fileUrlLimits).toEqual({ maxBytes: 52_428_800, timeoutMs: 30_000 });
  });

  it('accepts a file of exactly the cap', async () => {
    server.route('/exact.pdf', routes.bytes(pdfBytes(cap)));
    const result = await downloadPdf(server.url('/exact.pdf'), options({ maxBytes: cap }));
    expect(result.size).toBe(cap);
  });

  it('refuses by Content-Length before reading the body: 413 FILE_TOO_LARGE', async () => {
    const big = routes.stream(20 * cap, { contentLength: 20 * cap });
    server.route('/announced.pdf', big.route);
    const error = await failure(server.url('/announced.pdf'), { maxBytes: cap });
    expect(statusOfCode(error.code)).toBe(413);
    expect(error.code).toBe('FILE_TOO_LARGE');
    expect(error.field).toBe(field);
    expect(leftovers()).toEqual([]);
    await waitFor(() => big.clientLeft());
    expect(big.written()).toBeLessThan(20 * cap);
  });

  it('stops a body without Content-Length as soon as it crosses the cap: 413 FILE_TOO_LARGE', async () => {
    const big = routes.stream(40 * cap);
    server.route('/chunked.pdf', big.route);
    const error = await failure(server.url('/chunked.pdf'), { maxBytes: cap });
    expect(statusOfCode(error.code)).toBe(413);
    expect(error.code).toBe('FILE_TOO_LARGE');
    expect(leftovers()).toEqual([]);
    await waitFor(() => big.clientLeft());
    expect(big.written()).toBeLessThan(10 * cap);
  });

  it('fails a body shorter than its Content-Length as 502 FILE_URL_UNREACHABLE', async () => {
    server.route('/short.pdf', routes.shortBody(5000, 1000));
    const error = await failure(server.url('/short.pdf'));
    expect(statusOfCode(error.code)).toBe(502);
    expect(error.code).toBe('FILE_URL_UNREACHABLE');
    expect(leftovers()).toEqual([]);
  });
});

describe('fileUrl checks: answers within 30 seconds', () => {
  it('gives up on a server that never answers: 502 FILE_URL_TIMEOUT', async () => {
    server.route('/hang.pdf', routes.hang());
    const started = Date.now();
    const error = await failure(server.url('/hang.pdf'), { timeoutMs: 300 });
    expect(statusOfCode(error.code)).toBe(502);
    expect(error.code).toBe('FILE_URL_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('counts the whole download, not idle time: a slow drip times out', async () => {
    server.route('/drip.pdf', routes.drip(pdfBytes(20_000), 50, 40));
    const error = await failure(server.url('/drip.pdf'), { timeoutMs: 400 });
    expect(error.code).toBe('FILE_URL_TIMEOUT');
    expect(leftovers()).toEqual([]);
  });

  it('includes the TLS handshake: a silent server times out', async () => {
    const silent = await startSilentServer();
    try {
      const error = await failure(`https://127.0.0.1:${silent.port}/x.pdf`, { timeoutMs: 300 });
      expect(error.code).toBe('FILE_URL_TIMEOUT');
      expect(silent.connections).toBe(1);
    } finally {
      await silent.close();
    }
  });

  it('includes name resolution: a resolver that never answers times out', async () => {
    const error = await failure(`https://files.test:${server.port}/x.pdf`, {
      timeoutMs: 200,
      resolver: () => new Promise(() => {}),
    });
    expect(error.code).toBe('FILE_URL_TIMEOUT');
    expect(server.connections).toHaveLength(0);
  });
});

describe('fileUrl checks: recognised as PDF by its leading bytes', () => {
  it('refuses content that does not start with %PDF- whatever its Content-Type: 415 FILE_NOT_PDF', async () => {
    server.route(
      '/fake.pdf',
      routes.bytes(Buffer.from('<html>not a pdf</html>'), 'application/pdf'),
    );
    const error = await failure(server.url('/fake.pdf'));
    expect(statusOfCode(error.code)).toBe(415);
    expect(error.code).toBe('FILE_NOT_PDF');
    expect(error.field).toBe(field);
    expect(leftovers()).toEqual([]);
  });

  it('refuses an empty body and a body shorter than the signature', async () => {
    server.route('/empty.pdf', routes.bytes(Buffer.alloc(0)));
    server.route('/tiny.pdf', routes.bytes(Buffer.from('%PD')));
    for (const route of ['/empty.pdf', '/tiny.pdf']) {
      expect((await failure(server.url(route))).code).toBe('FILE_NOT_PDF');
    }
  });

  it('stops reading a large non-PDF at its first bytes', async () => {
    const big = routes.stream(40 * 1024 * 1024, { head: Buffer.from('<!doctype html>') });
    server.route('/html', big.route);
    const error = await failure(server.url('/html'));
    expect(error.code).toBe('FILE_NOT_PDF');
    await waitFor(() => big.clientLeft());
    expect(big.written()).toBeLessThan(10 * 1024 * 1024);
  });
});

describe('fileUrl download: network failures', () => {
  it('reports a dropped connection as 502 FILE_URL_UNREACHABLE', async () => {
    server.route('/reset.pdf', routes.reset());
    const error = await failure(server.url('/reset.pdf'));
    expect(statusOfCode(error.code)).toBe(502);
    expect(error.code).toBe('FILE_URL_UNREACHABLE');
  });

  it('reports a closed port as 502 FILE_URL_UNREACHABLE', async () => {
    const closed = await startSilentServer();
    await closed.close();
    const error = await failure(`https://127.0.0.1:${closed.port}/x.pdf`);
    expect(error.code).toBe('FILE_URL_UNREACHABLE');
  });

  it('reports a name that does not resolve as 502 FILE_URL_UNREACHABLE', async () => {
    const error = await failure('https://files.test/x.pdf', {
      resolver: async () => {
        throw Object.assign(new Error('getaddrinfo ENOTFOUND files.test'), { code: 'ENOTFOUND' });
      },
    });
    expect(error.code).toBe('FILE_URL_UNREACHABLE');
  });

  it('reports a certificate that does not match the name as 502 FILE_URL_TLS', async () => {
    server.route('/other.pdf', routes.bytes(pdfBytes()));
    const error = await failure(`https://other.test:${server.port}/other.pdf`, {
      resolver: resolveTo('127.0.0.1'),
    });
    expect(statusOfCode(error.code)).toBe(502);
    expect(error.code).toBe('FILE_URL_TLS');
    expect(server.requests).toHaveLength(0);
  });
});

async function waitFor(condition: () => boolean, ms = 3000): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
