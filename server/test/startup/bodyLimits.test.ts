import fs from 'node:fs';
import { chunkedBytes, type RawAnswer, rawExchange, repeatedBytes } from '../support/listening';
import { type BuiltServer, ensureBuilt, startBuiltServer, tempDataDir } from './builtServer';

/**
 * Oversized bodies streamed to the built server (its own process, so that its memory is its
 * own): refused before they are read. The bound stated: while a client streams 300 MB (or four
 * clients do at once), the server's resident memory grows by less than 50 MB, and the answer
 * arrives before the client has sent a tenth of the body, within 5 s (generous for a loaded
 * 2-core machine; it takes milliseconds).
 */

jest.setTimeout(120_000);

const body300MB = 300 * 1024 * 1024;
const chunk = Buffer.alloc(64 * 1024, 0x7b);
const rssGrowthBound = 50 * 1024 * 1024;

let server: BuiltServer;
let dataDir: string;
beforeAll(async () => {
  ensureBuilt();
  dataDir = tempDataDir();
  server = await startBuiltServer({
    DATA_DIR: dataDir,
    APP_ENV: 'production',
    TSA_URL: 'https://tsa.example',
    RATE_LIMIT_AUTH: '100000',
    RATE_LIMIT_API: '100000',
  });
  // Every route below once with a small body: what a first request loads is loaded.
  await Promise.all([
    rawExchange(server.port, head('/api/signing/s-1/reject', 2, ['X-Signing-Token: x']), [
      Buffer.from('{}'),
    ]),
    rawExchange(server.port, head('/api/auth/login', 2), [Buffer.from('{}')]),
  ]);
});
afterAll(async () => {
  await server?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

function head(path: string, length: number | 'chunked', extra: string[] = []): string {
  return [
    `POST ${path} HTTP/1.1`,
    'Host: 127.0.0.1',
    'Content-Type: application/json',
    length === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`,
    ...extra,
  ].join('\r\n');
}

function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/** Runs `exchanges` while sampling the server's RSS every 20 ms; the largest growth seen. */
async function withPeakRss<T>(exchanges: () => Promise<T>): Promise<{ result: T; growth: number }> {
  const baseline = rssOf(server.pid);
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssOf(server.pid));
  }, 20);
  try {
    const result = await exchanges();
    // What the server does right after answering (discarding what is in flight) counts too.
    await new Promise((resolve) => setTimeout(resolve, 700));
    return { result, growth: peak - baseline };
  } finally {
    clearInterval(sampler);
  }
}

function expectRefusedEarly(answer: RawAnswer, status: number, code: string) {
  expect(answer.status).toBe(status);
  expect(JSON.parse(answer.body)).toMatchObject({ statusCode: status, code });
  expect(answer.sentWhenAnswered).toBeGreaterThanOrEqual(0);
  expect(answer.sentWhenAnswered).toBeLessThan(body300MB / 10);
  expect(answer.ms).toBeLessThan(5000);
}

const rejectPath = '/api/signing/00000000-0000-4000-8000-000000000000/reject';

describe('an unauthenticated step with a 300 MB body', () => {
  it.each<[string, string[]]>([
    ['with a page credential that is not one', ['X-Signing-Token: forged']],
    ['with no credential at all', []],
  ])('%s: 401 before the body is read, by Content-Length', async (_label, extra) => {
    const { result, growth } = await withPeakRss(() =>
      rawExchange(server.port, head(rejectPath, body300MB, extra), repeatedBytes(body300MB, chunk)),
    );
    expectRefusedEarly(result, 401, 'UNAUTHORIZED');
    expect(growth).toBeLessThan(rssGrowthBound);
  });

  it('chunked: 401 before the body is read', async () => {
    const { result, growth } = await withPeakRss(() =>
      rawExchange(
        server.port,
        head(rejectPath, 'chunked', ['X-Signing-Token: forged']),
        chunkedBytes(body300MB, chunk),
      ),
    );
    expectRefusedEarly(result, 401, 'UNAUTHORIZED');
    expect(growth).toBeLessThan(rssGrowthBound);
  });

  it('four at once, two by Content-Length and two chunked: each 401, memory flat', async () => {
    const { result, growth } = await withPeakRss(() =>
      Promise.all([
        rawExchange(
          server.port,
          head(rejectPath, body300MB, ['X-Signing-Token: forged']),
          repeatedBytes(body300MB, chunk),
        ),
        rawExchange(server.port, head(rejectPath, body300MB), repeatedBytes(body300MB, chunk)),
        rawExchange(
          server.port,
          head(rejectPath, 'chunked', ['X-Signing-Token: forged']),
          chunkedBytes(body300MB, chunk),
        ),
        rawExchange(server.port, head(rejectPath, 'chunked'), chunkedBytes(body300MB, chunk)),
      ]),
    );
    for (const answer of result) expectRefusedEarly(answer, 401, 'UNAUTHORIZED');
    expect(growth).toBeLessThan(rssGrowthBound);
  });
});

describe('an anonymous route whose body is the credential (login: 16 KiB)', () => {
  it('a Content-Length over the limit: 413 at once, nothing read, the connection closed', async () => {
    const { result, growth } = await withPeakRss(() =>
      rawExchange(server.port, head('/api/auth/login', body300MB), repeatedBytes(body300MB, chunk)),
    );
    expectRefusedEarly(result, 413, 'PAYLOAD_TOO_LARGE');
    expect(result.headers.connection).toBe('close');
    expect(growth).toBeLessThan(rssGrowthBound);
  });

  it('chunked: cut off once it passes the limit, 413', async () => {
    const { result, growth } = await withPeakRss(() =>
      rawExchange(server.port, head('/api/auth/login', 'chunked'), chunkedBytes(body300MB, chunk)),
    );
    expectRefusedEarly(result, 413, 'PAYLOAD_TOO_LARGE');
    expect(growth).toBeLessThan(rssGrowthBound);
  });

  it('four at once: each 413, memory flat', async () => {
    const { result, growth } = await withPeakRss(() =>
      Promise.all([
        rawExchange(
          server.port,
          head('/api/auth/login', body300MB),
          repeatedBytes(body300MB, chunk),
        ),
        rawExchange(
          server.port,
          head('/api/auth/login', body300MB),
          repeatedBytes(body300MB, chunk),
        ),
        rawExchange(
          server.port,
          head('/api/auth/login', 'chunked'),
          chunkedBytes(body300MB, chunk),
        ),
        rawExchange(
          server.port,
          head('/api/auth/login', 'chunked'),
          chunkedBytes(body300MB, chunk),
        ),
      ]),
    );
    for (const answer of result) expectRefusedEarly(answer, 413, 'PAYLOAD_TOO_LARGE');
    expect(growth).toBeLessThan(rssGrowthBound);
  });
});
