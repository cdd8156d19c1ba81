import { createHarness, type Harness, readJson } from '../support/harness';

let h: Harness;
beforeAll(() => {
  h = createHarness();
});
afterAll(() => h.close());

interface Operation {
  operationId?: string;
  tags?: string[];
  summary?: string;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<
    string,
    {
      description: string;
      headers?: Record<string, { required?: boolean; schema: { type: string } }>;
      content?: Record<string, { schema: { allOf?: { properties?: { code?: unknown } }[] } }>;
    }
  >;
}

interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, { post: Operation }>;
  components: {
    schemas: Record<string, unknown>;
    securitySchemes: Record<string, { type: string; in?: string; name?: string; scheme?: string }>;
  };
}

describe('OpenAPI document (GET /api/openapi.json)', () => {
  let document: OpenApiDocument;
  beforeAll(async () => {
    const response = await h.request('GET', '/api/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    document = await readJson<OpenApiDocument>(response);
  });

  it('is an OpenAPI 3.1 document with info and servers', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info).toMatchObject({ title: 'ESign API', version: '1.0' });
    expect(document.servers).toEqual([{ url: 'http://127.0.0.1:3000' }]);
  });

  it('lists the four auth paths as POST operations with JSON bodies', () => {
    for (const path of ['login', 'refresh', 'login-server', 'partner-login']) {
      const operation = document.paths[`/api/auth/${path}`]?.post;
      expect(operation).toBeDefined();
      expect(operation!.tags).toEqual(['Authentication']);
      expect(Object.keys(operation!.requestBody!.content)).toEqual(['application/json']);
      expect(operation!.responses['401']).toBeDefined();
      expect(operation!.responses['429']).toBeDefined();
    }
    expect(Object.keys(document.paths['/api/auth/login']!.post!.responses)).toContain('200');
    expect(Object.keys(document.paths['/api/auth/partner-login']!.post!.responses)).toContain(
      '201',
    );
  });

  it('declares the credential kinds its operations accept; partner login uses the key', () => {
    // The Bearer access token is accepted by the contract and signing APIs only.
    expect(document.components.securitySchemes).toEqual({
      ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      Bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      PartnerToken: { type: 'apiKey', in: 'header', name: 'x-access-token' },
      SigningPage: { type: 'apiKey', in: 'header', name: 'X-Signing-Token' },
    });
    expect(document.paths['/api/auth/partner-login']!.post!.security).toEqual([{ ApiKey: [] }]);
    for (const path of ['login', 'refresh', 'login-server']) {
      expect(document.paths[`/api/auth/${path}`]!.post!.security).toEqual([]);
    }
  });

  /** Every operation of the document, paths and webhooks. */
  const operations = () => [
    ...Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        at: `${method} ${path}`,
        operation,
      })),
    ),
    ...Object.entries(document.webhooks).map(([name, item]) => ({
      at: `webhook ${name}`,
      operation: item.post,
    })),
  ];

  it('gives every operation a unique camelCase operationId and a security requirement', () => {
    const ids = operations().map(({ at, operation }) => {
      expect({ at, id: operation.operationId }).toEqual({
        at,
        id: expect.stringMatching(/^[a-z][a-zA-Z]+$/),
      });
      expect({ at, security: Array.isArray(operation.security) }).toEqual({ at, security: true });
      return operation.operationId;
    });
    expect(new Set(ids).size).toBe(ids.length);
    expect(document.paths['/api/integration/documents']!.post!.operationId).toBe('createDossier');
    expect(document.paths['/api/integration/documents/{documentId}']!.get!.operationId).toBe(
      'getDossierByDocumentId',
    );
  });

  it('documents Retry-After on every 429 and the error codes of every error response', () => {
    for (const { at, operation } of operations()) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (status === '429') {
          expect({ at, header: response.headers?.['Retry-After'] }).toEqual({
            at,
            header: expect.objectContaining({
              required: true,
              schema: expect.objectContaining({ type: 'integer' }),
            }),
          });
        }
        if (!/^[45]\d\d$/.test(status)) continue;
        const [base, own] = response.content!['application/json']!.schema.allOf!;
        expect({ at, status, base }).toEqual({
          at,
          status,
          base: { $ref: '#/components/schemas/Error' },
        });
        expect({ at, status, code: own!.properties!.code }).toEqual({
          at,
          status,
          code: { type: 'string', enum: expect.arrayContaining([expect.any(String)]) },
        });
      }
    }
    const login = document.paths['/api/auth/login']!.post!.responses;
    expect(login['429']!.headers!['Retry-After']).toBeDefined();
    expect(login['401']!.content!['application/json']!.schema.allOf![1]!.properties!.code).toEqual({
      type: 'string',
      enum: ['UNAUTHORIZED'],
    });
  });

  it('lists the seven webhook events with their X-Webhook-* headers and envelope', () => {
    expect(Object.keys(document.webhooks).sort()).toEqual([
      'document.completed',
      'document.rejected',
      'notification.process_finished',
      'notification.task_assigned_external',
      'notification.task_assigned_internal',
      'notification.task_rejected',
      'webhook.test',
    ]);
    for (const [name, { post }] of Object.entries(document.webhooks)) {
      const headers = post.parameters!.filter((parameter) => parameter.in === 'header');
      expect({ name, headers: headers.map((header) => header.name).sort() }).toEqual({
        name,
        headers: [
          'User-Agent',
          'X-Webhook-Event',
          'X-Webhook-Id',
          'X-Webhook-Signature',
          'X-Webhook-Timestamp',
        ],
      });
      expect(Object.keys(post.requestBody!.content)).toEqual(['application/json']);
    }
  });

  it('names the request, response and error schemas', () => {
    for (const name of [
      'LoginRequest',
      'RefreshRequest',
      'LoginServerRequest',
      'PartnerLoginRequest',
      'SessionTokens',
      'PartnerLoginData',
      'Error',
    ]) {
      expect(document.components.schemas).toHaveProperty(name);
    }
  });
});

describe('API docs page (GET /api/docs)', () => {
  let page: string;
  beforeAll(async () => {
    const response = await h.request('GET', '/api/docs');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('content-security-policy')).toContain("default-src 'self'");
    page = await response.text();
  });

  it('loads its scripts and styles from /api/docs/assets, no CDN URL anywhere in the page', async () => {
    const sources = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    expect(sources.length).toBeGreaterThanOrEqual(4);
    for (const source of sources) expect(source.startsWith('/api/docs/assets/')).toBe(true);
    expect(page).not.toMatch(/https?:\/\//);
    expect(page).not.toMatch(/["']\/\//);
    expect(page).not.toMatch(/unpkg|jsdelivr|cdnjs/i);
  });

  it('every asset the page names is served, with its content type', async () => {
    const sources = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    for (const source of sources) {
      const response = await h.request('GET', source);
      expect(response.status).toBe(200);
      const type = response.headers.get('content-type') ?? '';
      if (source.endsWith('.js')) expect(type).toMatch(/^text\/javascript/);
      if (source.endsWith('.css')) expect(type).toMatch(/^text\/css/);
      if (source.endsWith('.png')) expect(type).toBe('image/png');
      expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(100);
    }
    const init = await (await h.request('GET', '/api/docs/assets/init.js')).text();
    expect(init).toContain("url: '/api/openapi.json'");
    // Swagger UI would otherwise send the document URL to validator.swagger.io.
    expect(init).toContain('validatorUrl: null');
    expect(init).not.toMatch(/https?:\/\//);
  });

  it('does not serve files outside its asset list', async () => {
    for (const name of ['package.json', '..%2Fpackage.json', 'index.html']) {
      const response = await h.request('GET', `/api/docs/assets/${name}`);
      expect(response.status).toBe(404);
    }
  });
});
