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

interface OpenApiDoc {
  paths: Record<
    string,
    Record<string, { security?: unknown[]; responses: Record<string, unknown> }>
  >;
}

describe('OpenAPI of dossiers and files', () => {
  it('lists endpoints 1–5 and the presigned route with their credentials and statuses', async () => {
    const doc = (await (await world.h.request('GET', '/api/openapi.json')).json()) as OpenApiDoc;
    const operation = (path: string, method: string) => doc.paths[path]?.[method];
    const integration = [{ ApiKey: [] }, { PartnerToken: [] }];
    const expected: [string, string, string[]][] = [
      [
        '/api/integration/documents',
        'post',
        ['201', '400', '401', '403', '404', '409', '413', '415', '422', '429', '502'],
      ],
      [
        '/api/integration/documents/{documentId}/start',
        'post',
        ['200', '400', '401', '403', '404', '429'],
      ],
      ['/api/integration/documents/{documentId}', 'get', ['200', '401', '403', '404', '429']],
      ['/api/integration/documents/{documentId}/files', 'get', ['200', '401', '403', '404', '429']],
      ['/api/integration/files/{fileUuid}/download', 'get', ['200', '401', '403', '404', '429']],
    ];
    for (const [path, method, statuses] of expected) {
      expect(Object.keys(operation(path, method)?.responses ?? {}).sort()).toEqual(statuses.sort());
      expect(operation(path, method)?.security).toEqual(integration);
    }
    const presigned = operation('/api/files/{fileUuid}', 'get');
    expect(Object.keys(presigned?.responses ?? {}).sort()).toEqual([
      '200',
      '403',
      '404',
      '410',
      '429',
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
});
