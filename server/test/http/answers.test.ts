import { statusOfCode } from '../../src/http/errorStatuses';
import { pdfPreparationErrors, pdfReadErrors } from '../../src/pdf/signing/errors';
import {
  createHarness,
  type Harness,
  readJson,
  type SeededTenant,
  seedTenant,
} from '../support/harness';
import { operationsReaching } from '../support/reaching';

/**
 * Answers of the HTTP layer are listed for every operation in /api/openapi.json, with their
 * codes, and come in the spec's error shape: an over-long id, a repeated query parameter, an
 * undecodable path, headers over Node's limit (431, test/startup/requestTarget.test.ts sends it
 * to the built server), a body over the route's limit. And every operation that reads a PDF
 * lists what a read answers.
 */

let h: Harness;
let acme: SeededTenant;
beforeAll(async () => {
  h = createHarness();
  acme = await seedTenant(h, 'ACME');
});
afterAll(() => h.close());

interface Answer {
  headers?: Record<string, { required?: boolean }>;
  content?: {
    'application/json'?: { schema: { allOf?: { properties?: { code?: { enum?: string[] } } }[] } };
  };
}
interface Operation {
  operationId: string;
  parameters?: { in: string }[];
  requestBody?: unknown;
  responses: Record<string, Answer>;
}

const codesOf = (answer: Answer | undefined): string[] =>
  answer?.content?.['application/json']?.schema.allOf?.[1]?.properties?.code?.enum ?? [];

describe('the OpenAPI document', () => {
  it('lists the HTTP layer’s answers for every operation', async () => {
    const document = await readJson<{ paths: Record<string, Record<string, Operation>> }>(
      await h.request('GET', '/api/openapi.json'),
    );
    let operations = 0;
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const at = `${method} ${path}`;
        const listed = (status: string) => ({ at, codes: codesOf(operation.responses[status]) });
        const containing = (codes: string[]) => ({ at, codes: expect.arrayContaining(codes) });
        expect(listed('400')).toEqual(containing(['BAD_REQUEST_TARGET']));
        expect(listed('408')).toEqual(containing(['REQUEST_TIMEOUT']));
        expect(listed('431')).toEqual(containing(['HEADERS_TOO_LARGE']));
        expect(listed('503')).toEqual(containing(['DATABASE_BUSY']));
        if ((operation.parameters ?? []).some((p) => p.in === 'path' || p.in === 'query')) {
          expect(listed('400')).toEqual(containing(['VALIDATION_ERROR']));
        }
        if (operation.requestBody) {
          expect({ at, listed: listed('413').codes.length > 0 }).toEqual({ at, listed: true });
        }
        operations += 1;
      }
    }
    expect(operations).toBeGreaterThan(40);
    const confirm = document.paths['/api/signing/{sessionId}/confirm']!.post!;
    expect(codesOf(confirm.responses['409'])).toContain('PREPARATION_NOT_OPEN');
    const reject = document.paths['/api/signing/{sessionId}/reject']!.post!;
    expect(codesOf(reject.responses['413'])).toEqual(['PAYLOAD_TOO_LARGE']);
    const create = document.paths['/api/contracts']!.post!;
    expect(codesOf(create.responses['413'])).toEqual(['FILE_TOO_LARGE']);
    expect(codesOf(create.responses['400'])).toEqual(
      expect.arrayContaining(['INVALID_MULTIPART', 'VALIDATION_ERROR']),
    );
    expect(codesOf(create.responses['422'])).toContain('DOCX_TOO_LARGE');
    expect(codesOf(create.responses['503'])).toEqual([
      'PDF_READER_BUSY',
      'DOCX_CONVERSION_BUSY',
      'DATABASE_BUSY',
    ]);
  });

  it('lists what a PDF read answers for every operation whose handler reads one', async () => {
    const document = await readJson<{ paths: Record<string, Record<string, Operation>> }>(
      await h.request('GET', '/api/openapi.json'),
    );
    const operations = new Map(
      Object.values(document.paths)
        .flatMap((methods) => Object.values(methods))
        .map((operation) => [operation.operationId, operation]),
    );
    // Found in the code, not listed here: every handler that can reach the pool of PDF readers
    // (runPdfTask), through any chain of calls. A new route that reads a PDF is checked too.
    const readers = operationsReaching([
      { file: 'server/src/pdf/worker/pool.ts', name: 'runPdfTask' },
      { file: 'server/src/pdf/worker/pool.ts', name: 'pdfWorkers' },
    ]);
    // The ones known today, so that a search that finds nothing cannot pass.
    expect([...readers.keys()]).toEqual(
      expect.arrayContaining([
        'createContract',
        'createDossier',
        'downloadContract',
        'verifyContractSignatures',
        'initiateSigning',
        'initiateTaskSigning',
        'startInvitationSigning',
        'confirmSigning',
        'prepareTokenSigning',
        'signWithToken',
      ]),
    );
    for (const [operationId, chain] of readers) {
      const operation = operations.get(operationId);
      const listed = (status: string) => ({ chain, codes: codesOf(operation?.responses[status]) });
      expect(listed('422')).toEqual({ chain, codes: expect.arrayContaining(['PDF_TOO_COMPLEX']) });
      expect(listed('503')).toEqual({ chain, codes: expect.arrayContaining(['PDF_READER_BUSY']) });
      for (const code of pdfReadErrors) {
        expect(listed(String(statusOfCode(code)))).toEqual({
          chain,
          codes: expect.arrayContaining([code]),
        });
      }
      expect(operation?.responses['503']?.headers?.['Retry-After']).toEqual(
        expect.objectContaining({ required: false }),
      );
    }
  }, 120_000);

  it('lists each PDF answer under the status it is answered with', async () => {
    const document = await readJson<{ paths: Record<string, Record<string, Operation>> }>(
      await h.request('GET', '/api/openapi.json'),
    );
    // The statuses of pdfPreparationErrors are the edge table's.
    const statusOf = new Map(
      pdfPreparationErrors.map((code) => [code, String(statusOfCode(code))]),
    );
    const misplaced = Object.values(document.paths)
      .flatMap((methods) => Object.values(methods))
      .flatMap((operation) =>
        Object.entries(operation.responses).flatMap(([status, answer]) =>
          codesOf(answer)
            .filter((code) => statusOf.has(code) && statusOf.get(code) !== status)
            .map((code) => `${operation.operationId}: ${status} ${code}`),
        ),
      );
    expect(misplaced).toEqual([]);
    expect(Object.fromEntries(statusOf)).toMatchObject({
      NOT_A_PDF: '415',
      PDF_UNREADABLE: '422',
      PDF_ENCRYPTED: '422',
      PDF_TOO_COMPLEX: '422',
      PDF_CHANGES_NOT_ALLOWED: '422',
      PDF_READER_BUSY: '503',
    });
  });
});

describe('the answers themselves', () => {
  const get = (url: string) => h.request('GET', url, { headers: { 'x-api-key': acme.orgKey } });

  it('a repeated query parameter: 400 VALIDATION_ERROR naming it, details.code REPEATED', async () => {
    for (const url of [
      '/api/contracts?page=1&page=2',
      '/api/contracts?status=draft&status=signing',
      '/api/contracts/x/download?type=signed&type=original',
    ]) {
      const response = await get(url);
      expect(response.status).toBe(400);
      const repeated = [...new URL(url, 'http://x').searchParams.keys()][0];
      expect(await readJson(response)).toMatchObject({
        statusCode: 400,
        code: 'VALIDATION_ERROR',
        message: `${repeated}: must be given once`,
        details: { field: repeated, code: 'REPEATED' },
      });
    }
  });

  it('an over-long id: 400 VALIDATION_ERROR naming it', async () => {
    const response = await get(`/api/contracts/${'x'.repeat(100)}`);
    expect(response.status).toBe(400);
    expect(await readJson(response)).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { field: 'id' },
    });
  });

  it('an undecodable path: 400 BAD_REQUEST_TARGET', async () => {
    const response = await get('/api/contracts/%zz');
    expect(response.status).toBe(400);
    expect((await readJson(response)).code).toBe('BAD_REQUEST_TARGET');
  });
});
