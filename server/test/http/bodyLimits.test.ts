import {
  createHarness,
  type Harness,
  readJson,
  type SeededTenant,
  seedTenant,
} from '../support/harness';

/**
 * The one body-limit mechanism, route by route (app.request, no socket; the 300 MB streams to the
 * built server are in test/startup/bodyLimits.test.ts): every route that asks for a credential
 * refuses a caller without one before it reads a byte of the body, the default limit applies to
 * every route that declares none, and a route's declared limit replaces it.
 */

let h: Harness;
let acme: SeededTenant;
beforeAll(async () => {
  h = createHarness();
  acme = await seedTenant(h, 'ACME');
});
afterAll(() => h.close());

interface Operation {
  security?: Record<string, string[]>[];
  requestBody?: unknown;
}

/** A body that records whether anything ever pulled from it. */
function watchedBody(): { body: ReadableStream<Uint8Array>; pulled: () => boolean } {
  let pulled = false;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        pulled = true;
        controller.enqueue(new TextEncoder().encode('{"reason":"x"}'));
        controller.close();
      },
    },
    { highWaterMark: 0 },
  );
  return { body, pulled: () => pulled };
}

function send(
  method: string,
  path: string,
  body: ReadableStream<Uint8Array> | string,
  headers: Record<string, string> = {},
) {
  return h.app.request(path, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body,
    duplex: 'half',
  } as RequestInit);
}

describe('every route that asks for a credential', () => {
  it('refuses a caller without one (401) before reading the body', async () => {
    const document = await readJson<{ paths: Record<string, Record<string, Operation>> }>(
      await h.request('GET', '/api/openapi.json'),
    );
    const checked: string[] = [];
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        if (!operation.requestBody || (operation.security ?? []).length === 0) continue;
        const url = path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
        for (const headers of [{}, { 'x-signing-token': 'forged' }] as Record<string, string>[]) {
          const { body, pulled } = watchedBody();
          const response = await send(method.toUpperCase(), url, body, headers);
          expect({ at: `${method} ${path}`, headers, status: response.status }).toEqual({
            at: `${method} ${path}`,
            headers,
            status: 401,
          });
          expect({ at: `${method} ${path}`, pulled: pulled() }).toEqual({
            at: `${method} ${path}`,
            pulled: false,
          });
        }
        checked.push(`${method} ${path}`);
      }
    }
    // The step the audit sent 300 MB to, contract creation and the directory are among them.
    expect(checked).toEqual(
      expect.arrayContaining([
        'post /api/signing/{sessionId}/reject',
        'post /api/signing/{sessionId}/confirm',
        'post /api/contracts',
        'post /api/integration/directory/users/bulk',
        'post /api/integration/documents',
      ]),
    );
  });
});

describe('limits', () => {
  const cancelPath = '/api/contracts/00000000-0000-4000-8000-000000000000';
  const over64KiB = JSON.stringify({ reason: 'x'.repeat(70 * 1024) });

  it('a route that declares none has the 64 KiB default: 413 PAYLOAD_TOO_LARGE', async () => {
    // By Content-Length, refused at once.
    const announced = await send('DELETE', cancelPath, over64KiB, {
      'x-api-key': acme.orgKey,
      'content-length': String(Buffer.byteLength(over64KiB)),
    });
    expect(announced.status).toBe(413);
    expect(await readJson(announced)).toMatchObject({
      statusCode: 413,
      error: 'Payload Too Large',
      code: 'PAYLOAD_TOO_LARGE',
    });
    // Without one, cut off once the limit is passed; the JSON reader's failure is not the answer.
    const streamed = await send('DELETE', cancelPath, over64KiB, { 'x-api-key': acme.orgKey });
    expect(streamed.status).toBe(413);
    expect((await readJson(streamed)).code).toBe('PAYLOAD_TOO_LARGE');
    // Under it, the route answers as usual.
    const small = await send('DELETE', cancelPath, JSON.stringify({ reason: 'x' }), {
      'x-api-key': acme.orgKey,
    });
    expect(small.status).toBe(404);
  });

  it('a declared limit replaces the default: the bulk directory sync takes 4 MiB', async () => {
    const users = Array.from({ length: 200 }, (_, index) => ({
      code: `U${index}`,
      email: `u${index}@acme.example`,
      address: 'x'.repeat(400),
    }));
    const body = JSON.stringify({ tenantCode: 'ACME', users });
    expect(Buffer.byteLength(body)).toBeGreaterThan(64 * 1024);
    const response = await send('POST', '/api/integration/directory/users/bulk', body, {
      'x-api-key': acme.orgKey,
    });
    expect(response.status).toBe(200);
    const tooBig = JSON.stringify({ tenantCode: 'ACME', users: 'x'.repeat(4 * 1024 * 1024) });
    const refused = await send('POST', '/api/integration/directory/users/bulk', tooBig, {
      'x-api-key': acme.orgKey,
    });
    expect(refused.status).toBe(413);
  });
});
