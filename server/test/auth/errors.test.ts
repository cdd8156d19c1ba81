import { type Harness, readJson, type SeededTenant } from '../support/harness';
import { errorOf, type ProbeApp, send, twoTenants } from './fixtures';

let h: Harness, app: ProbeApp, acme: SeededTenant;

beforeAll(async () => {
  ({ h, app, acme } = await twoTenants());
});
afterAll(() => h.close());

const authPaths = ['/login', '/refresh', '/login-server', '/partner-login'].map(
  (path) => `/api/auth${path}`,
);

function raw(path: string, body: string, headers: Record<string, string>) {
  return Promise.resolve(
    app.request(path, { method: 'POST', body, headers: { 'x-api-key': acme.orgKey, ...headers } }),
  );
}

describe('Error body', () => {
  it('general shape: statusCode, message, error (status text), code; details with field and code', async () => {
    const response = await send(app, 'POST', '/api/auth/login', {
      json: { username: 'someone', password: 42 },
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await readJson(response)).toEqual({
      statusCode: 400,
      message: 'password: Invalid input: expected string, received number',
      error: 'Bad Request',
      code: 'VALIDATION_ERROR',
      details: { field: 'password', code: 'INVALID_TYPE' },
    });
  });

  it('malformed JSON gives 400 INVALID_JSON on every auth endpoint', async () => {
    for (const path of authPaths) {
      for (const body of ['{bad', '{"username": "a",}', "{'username': 'a'}", '']) {
        const response = await raw(path, body, { 'content-type': 'application/json' });
        expect(response.status).toBe(400);
        expect(await errorOf(response)).toMatchObject({
          statusCode: 400,
          error: 'Bad Request',
          code: 'INVALID_JSON',
        });
      }
    }
  });

  it('a body that is not JSON gives 415 (wrong or missing content type)', async () => {
    for (const path of authPaths) {
      const contentTypes: Record<string, string>[] = [
        { 'content-type': 'text/plain' },
        { 'content-type': 'application/x-www-form-urlencoded' },
        { 'content-type': 'multipart/form-data; boundary=x' },
        {},
      ];
      for (const headers of contentTypes) {
        const response = await raw(path, '{"username":"a","password":"b"}', headers);
        expect(response.status).toBe(415);
        expect(await errorOf(response)).toEqual({
          statusCode: 415,
          message: 'Send the body as application/json',
          error: 'Unsupported Media Type',
          code: 'UNSUPPORTED_MEDIA_TYPE',
        });
      }
    }
  });

  it('a body over 16 KiB gives 413 PAYLOAD_TOO_LARGE before it is parsed', async () => {
    const big = JSON.stringify({ username: 'admin.acme', password: 'x'.repeat(17 * 1024) });
    for (const path of authPaths) {
      const headerSets: Record<string, string>[] = [
        { 'content-type': 'application/json' },
        { 'content-type': 'application/json', 'content-length': String(big.length) },
      ];
      for (const headers of headerSets) {
        const response = await raw(path, big, headers);
        expect(response.status).toBe(413);
        expect(await errorOf(response)).toEqual({
          statusCode: 413,
          message: 'The request body exceeds 16384 bytes',
          error: 'Payload Too Large',
          code: 'PAYLOAD_TOO_LARGE',
        });
      }
      // Just under the limit is read (and then judged on its content).
      const fits = JSON.stringify({ refreshToken: 'r'.repeat(15 * 1024) });
      const response = await raw(path, fits, { 'content-type': 'application/json' });
      expect(response.status).toBe(400);
      expect((await errorOf(response)).code).toBe('VALIDATION_ERROR');
    }
  });

  it('an unknown route gives 404 with a JSON error body', async () => {
    for (const [method, path] of [
      ['GET', '/api/nothing-here'],
      ['GET', '/api/auth/login'],
      ['DELETE', '/api/auth/refresh'],
      ['POST', '/'],
    ] as const) {
      const response = await send(app, method, path);
      expect(response.status).toBe(404);
      expect(await errorOf(response)).toEqual({
        statusCode: 404,
        message: `No route for ${method} ${path}`,
        error: 'Not Found',
        code: 'NOT_FOUND',
      });
    }
  });

  it('nothing gives 500: odd bodies and headers on the auth endpoints', async () => {
    const bodies: unknown[] = [
      null,
      0,
      'string',
      [],
      [{}],
      {},
      { username: null, password: null },
      { username: {}, password: [] },
      { username: 'a'.repeat(100_000), password: 'b' },
      { username: 'admin.acme', password: 'p'.repeat(100_000) },
      { username: '\u0000', password: '\u0000' },
      { username: 'ａｄｍｉｎ', password: '🔑' },
      { refreshToken: 'rt_'.padEnd(600, 'x') },
      { refreshToken: ['rt_a'] },
      { secretKey: 'esk_', cccd: '0' },
      { secretKey: acme.orgKey, cccd: '1'.repeat(50) },
      { username: 'admin.acme', tenantCode: 42 },
      { username: 'admin.acme', tenantCode: '' },
      { __proto__: { polluted: true }, username: 'x', password: 'y' },
    ];
    const headerSets: Record<string, string>[] = [
      {},
      { 'x-api-key': 'esk_aaaaaaaaaaaaaaaa_' },
      { 'x-api-key': ' ' },
      { authorization: 'Bearer' },
      { authorization: 'Bearer a.b.c' },
      { authorization: 'Basic YTpi' },
      { 'x-access-token': 'e30.e30.' },
      { 'x-access-token': 'Bearer' },
    ];
    const seen = new Set<number>();
    for (const path of authPaths) {
      // Only partner login reads credential headers; the others get one odd header set each.
      const headerSetsHere = path.endsWith('/partner-login') ? headerSets : headerSets.slice(0, 2);
      for (const json of bodies) {
        for (const headers of headerSetsHere) {
          const response = await send(app, 'POST', path, { json, headers });
          seen.add(response.status);
          expect(response.status).toBeLessThan(500);
          expect(response.headers.get('content-type')).toMatch(/^application\/json/);
        }
      }
    }
    // The sweep reached the validators and the authentication layer, not just one status.
    expect([...seen].sort()).toEqual(expect.arrayContaining([400, 401]));
  }, 120_000);

  it('nothing gives 500: odd credentials on every credential area', async () => {
    const odd: Record<string, string>[] = [
      { 'x-api-key': `esk_${'z'.repeat(16)}_${'y'.repeat(43)}` },
      { 'x-api-key': 'legacy_0123456789abcdef' },
      { authorization: `Bearer ${'a'.repeat(10_000)}` },
      { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.' },
      { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiItMSIsInR5cCI6ImFjY2VzcyJ9.x' },
      { 'x-access-token': '...' },
      { 'x-access-token': 'eyJ.eyJ.eyJ' },
    ];
    for (const area of ['contracts', 'integration', 'directory', 'webhookTest', 'partnerLogin']) {
      for (const headers of odd) {
        const response = await send(app, 'GET', `/probe/${area}`, { headers });
        expect(response.status).toBe(401);
      }
    }
  });
});
