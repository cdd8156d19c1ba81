import fs from 'node:fs';
import net from 'node:net';
import { type BuiltServer, ensureBuilt, startBuiltServer, tempDataDir } from './builtServer';

/**
 * Requests whose target cannot be routed, sent as raw bytes to the built server: whichever layer
 * refuses them (Node's parser, @hono/node-server, the app), the answer is the spec's JSON error
 * body with an X-Request-Id, as for every other request.
 */

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends `head` (request line and headers, no final blank line) and reads to the close. */
function rawRequest(port: number, head: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`${head}\r\nConnection: close\r\n\r\n`);
    });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [headText = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = headText.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      let body = rest.join('\r\n\r\n');
      if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
  });
}

function dechunk(encoded: string): string {
  let decoded = '';
  let rest = encoded;
  for (;;) {
    const lineEnd = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.slice(0, lineEnd), 16);
    if (!(size > 0)) return decoded;
    decoded += rest.slice(lineEnd + 2, lineEnd + 2 + size);
    rest = rest.slice(lineEnd + 2 + size + 2);
  }
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('malformed request targets on the built server', () => {
  let server: BuiltServer;
  let dataDir: string;

  beforeAll(async () => {
    ensureBuilt();
    dataDir = tempDataDir();
    server = await startBuiltServer({
      DATA_DIR: dataDir,
      APP_ENV: 'production',
      TSA_URL: 'https://tsa.example',
    });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  function expectRefusal(response: RawResponse, status: number, code: string, message: RegExp) {
    expect(response.status).toBe(status);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.headers['x-request-id']).toMatch(uuid);
    const body = JSON.parse(response.body) as Record<string, unknown>;
    expect(body).toEqual({
      statusCode: status,
      message: expect.stringMatching(message),
      error: status === 400 ? 'Bad Request' : expect.any(String),
      code,
    });
  }

  it.each([
    ['a backslash alone', 'GET /api/\\ HTTP/1.1', /backslash/],
    ['a backslash in a route', 'GET /api/integration/documents/a\\b HTTP/1.1', /backslash/],
    ['a backslash in an absolute URL', 'GET http://x/a\\b HTTP/1.1', /absolute URL/],
    ['an invalid percent-encoding', 'GET /api/integration/documents/%zz HTTP/1.1', /percent/],
    ['a percent-encoding that is not UTF-8', 'GET /api/%FF HTTP/1.1', /percent/],
    ['a control character in the path', 'GET /api/\u0001 HTTP/1.1', /cannot be parsed/],
  ])('%s: 400 BAD_REQUEST_TARGET', async (_name, requestLine, message) => {
    const response = await rawRequest(server.port, `${requestLine}\r\nHost: 127.0.0.1`);
    expectRefusal(response, 400, 'BAD_REQUEST_TARGET', message);
  });

  it('HTTP/1.1 without Host: 400 BAD_REQUEST_TARGET (RFC 9112 §3.2)', async () => {
    const response = await rawRequest(server.port, 'GET /health HTTP/1.1');
    expectRefusal(response, 400, 'BAD_REQUEST_TARGET', /Host header/);
  });

  it('HTTP/1.0 without Host is served', async () => {
    const response = await rawRequest(server.port, 'GET /health HTTP/1.0');
    expect(response.status).toBe(200);
    expect(response.headers['x-request-id']).toMatch(uuid);
  });

  it('headers too large: 431 with the JSON body', async () => {
    const response = await rawRequest(
      server.port,
      `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${'a'.repeat(20_000)}`,
    );
    expectRefusal(response, 431, 'HEADERS_TOO_LARGE', /too large/);
  });

  it('a request line that is not HTTP/1.1: 400 BAD_REQUEST', async () => {
    const response = await rawRequest(server.port, 'GET /a b c HTTP/1.1\r\nHost: 127.0.0.1');
    expectRefusal(response, 400, 'BAD_REQUEST', /cannot be parsed/);
  });

  it('an absolute-form target (RFC 9112 §3.2.2) is served like its path', async () => {
    const health = await rawRequest(server.port, 'GET http://x/health HTTP/1.1\r\nHost: x');
    expect(health.status).toBe(200);
    expect(health.headers['x-request-id']).toMatch(uuid);
    const root = await rawRequest(server.port, 'GET http://x HTTP/1.1\r\nHost: x');
    expect(root.status).toBe(302);
    expect(root.headers.location).toBe('/app/dashboard');
  });

  it('GET / leads to the web application', async () => {
    const response = await rawRequest(server.port, 'GET / HTTP/1.1\r\nHost: 127.0.0.1');
    expect(response.status).toBe(302);
    expect(response.headers.location).toBe('/app/dashboard');
    expect(response.headers['x-request-id']).toMatch(uuid);
  });

  it.each(['/app', '/app/tasks?id=2'])(
    'GET %s leads a visitor without a session to sign in',
    async (target) => {
      const response = await rawRequest(server.port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1`);
      expect(response.status).toBe(303);
      expect(response.headers.location).toMatch(/^\/app\/dang-nhap\?next=/);
    },
  );

  it('a well-formed request still reaches the app', async () => {
    const response = await rawRequest(server.port, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1');
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ status: 'ok' });
  });
});
