import {
  DossierCreated,
  DossierFileList,
  DossierLookup,
  DossierStarted,
} from '../../src/dossiers/schemas';
import { documentsPath, hdldBody, openWorld, type World } from './fixtures';

/** The OpenAPI document describes endpoints 1–5 and the answers match their schemas. */

let world: World;
beforeAll(async () => {
  world = await openWorld();
});
afterAll(() => world.close());

interface ErrorResponse {
  content: Record<
    string,
    { schema: { allOf: [unknown, { properties: { code: { enum: string[] } } }] } }
  >;
}

interface OpenApiDoc {
  paths: Record<
    string,
    Record<string, { security?: unknown[]; responses: Record<string, ErrorResponse> }>
  >;
  components: { schemas: Record<string, unknown> };
}

const openApi = async () =>
  (await (await world.h.request('GET', '/api/openapi.json')).json()) as OpenApiDoc;

/** The `code` values the document lists for one status of one operation. */
function documentedCodes(doc: OpenApiDoc, method: string, path: string, status: number): string[] {
  const response = doc.paths[path]?.[method]?.responses[String(status)];
  return response?.content['application/json']?.schema.allOf[1].properties.code.enum ?? [];
}

describe('OpenAPI of dossiers and files', () => {
  it('lists endpoints 1–5 and the presigned route with their credentials and statuses', async () => {
    const doc = await openApi();
    const operation = (path: string, method: string) => doc.paths[path]?.[method];
    // 400 (a path that does not decode, an id too long), 408 and 431 (the HTTP layer) on each.
    const integration = [{ ApiKey: [] }, { PartnerToken: [] }];
    const expected: [string, string, string[]][] = [
      [
        '/api/integration/documents',
        'post',
        // 503 PDF_READER_BUSY: a fetched file is read in the PDF worker pool.
        [
          '201',
          '400',
          '401',
          '403',
          '404',
          '408',
          '409',
          '413',
          '415',
          '422',
          '429',
          '431',
          '502',
          '503',
        ],
      ],
      [
        '/api/integration/documents/{documentId}/start',
        'post',
        ['200', '400', '401', '403', '404', '408', '429', '431', '503'],
      ],
      [
        '/api/integration/documents/{documentId}',
        'get',
        ['200', '400', '401', '403', '404', '408', '429', '431', '503'],
      ],
      [
        '/api/integration/documents/{documentId}/files',
        'get',
        ['200', '400', '401', '403', '404', '408', '429', '431', '503'],
      ],
      [
        '/api/integration/files/{fileUuid}/download',
        'get',
        ['200', '400', '401', '403', '404', '408', '429', '431', '503'],
      ],
    ];
    for (const [path, method, statuses] of expected) {
      expect(Object.keys(operation(path, method)?.responses ?? {}).sort()).toEqual(statuses.sort());
      expect(operation(path, method)?.security).toEqual(integration);
    }
    const presigned = operation('/api/files/{fileUuid}', 'get');
    expect(Object.keys(presigned?.responses ?? {}).sort()).toEqual([
      '200',
      '400',
      '403',
      '404',
      '408',
      '410',
      '429',
      '431',
      '503',
    ]);
    // Public: the signature in the query is the credential.
    expect(presigned?.security).toEqual([]);
  });

  it('the answers of endpoints 1–4 have exactly the documented fields', async () => {
    const headers = { 'X-API-Key': world.key };
    const body = hdldBody(world, { disableStart: true });
    const created = (await (await world.create(body)).json()) as { data: unknown };
    expect(DossierCreated.strict().safeParse(created.data).success).toBe(true);
    const path = `${documentsPath}/${body.documentId}`;
    const started = (await (
      await world.h.request('POST', `${path}/start`, { headers })
    ).json()) as {
      data: unknown;
    };
    expect(DossierStarted.strict().safeParse(started.data).success).toBe(true);
    const looked = (await (await world.h.request('GET', path, { headers })).json()) as {
      data: unknown;
    };
    expect(DossierLookup.strict().safeParse(looked.data).success).toBe(true);
    const listed = (await (await world.h.request('GET', `${path}/files`, { headers })).json()) as {
      data: unknown;
    };
    expect(DossierFileList.strict().safeParse(listed.data).success).toBe(true);
  });

  it('documents a file item as oneOf by source, fileUrl or templateCode required', async () => {
    const { components } = await openApi();
    expect(components.schemas.DossierFileInput).toEqual({
      oneOf: [
        { $ref: '#/components/schemas/DossierFileFromUrl' },
        { $ref: '#/components/schemas/DossierFileFromTemplate' },
      ],
      discriminator: {
        propertyName: 'source',
        mapping: {
          url: '#/components/schemas/DossierFileFromUrl',
          template: '#/components/schemas/DossierFileFromTemplate',
        },
      },
    });
    expect(components.schemas.DossierFileFromUrl).toMatchObject({
      required: ['source', 'fileUrl'],
    });
    expect(components.schemas.DossierFileFromTemplate).toMatchObject({
      required: ['source', 'templateCode'],
    });
  });

  it('every error these endpoints answer has a status and code the document lists for it', async () => {
    const doc = await openApi();
    const headers = { 'X-API-Key': world.key };
    const body = hdldBody(world, { disableStart: true });
    const path = `${documentsPath}/${body.documentId}`;
    const answers: [string, string, Response][] = [];
    await world.create(body);
    answers.push(['post', '/api/integration/documents', await world.create(body)]);
    answers.push([
      'post',
      '/api/integration/documents',
      await world.create({ ...body, documentId: 'OPENAPI-X', processDefCode: 'NOPE' }),
    ]);
    answers.push([
      'post',
      '/api/integration/documents',
      await world.h.request('POST', documentsPath, { headers, body: '{"documentId":' }),
    ]);
    answers.push([
      'post',
      '/api/integration/documents',
      await world.h.request('POST', documentsPath, {
        headers: { ...headers, 'content-type': 'text/plain' },
        body: '{}',
      }),
    ]);
    await world.h.request('POST', `${path}/start`, { headers });
    const start = '/api/integration/documents/{documentId}/start';
    answers.push(['post', start, await world.h.request('POST', `${path}/start`, { headers })]);
    answers.push([
      'post',
      start,
      await world.h.request('POST', `${documentsPath}/UNKNOWN/start`, { headers }),
    ]);
    answers.push([
      'get',
      '/api/integration/documents/{documentId}',
      await world.h.request('GET', path, {}),
    ]);
    answers.push([
      'get',
      '/api/integration/documents/{documentId}/files',
      await world.h.request('GET', `${documentsPath}/UNKNOWN/files`, { headers }),
    ]);
    answers.push([
      'get',
      '/api/integration/files/{fileUuid}/download',
      await world.h.request('GET', '/api/integration/files/nope/download', { headers }),
    ]);
    answers.push(['get', '/api/files/{fileUuid}', await world.h.request('GET', '/api/files/nope')]);
    const statuses = new Set<number>();
    for (const [method, documented, response] of answers) {
      const { code } = (await response.json()) as { code: string };
      statuses.add(response.status);
      const listed = documentedCodes(doc, method, documented, response.status);
      expect({ documented, status: response.status, code, listed: listed.includes(code) }).toEqual({
        documented,
        status: response.status,
        code,
        listed: true,
      });
    }
    expect([...statuses].sort()).toEqual([400, 401, 403, 404, 409, 415]);
  });
});
