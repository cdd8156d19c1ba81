import { createHarness, type Harness, readJson } from '../support/harness';

interface OpenApi {
  paths: Record<
    string,
    Record<string, { parameters?: { name: string; in: string }[]; security?: unknown[] }>
  >;
  components: {
    schemas: Record<string, { properties?: Record<string, unknown>; allOf?: unknown }>;
  };
}

describe('OpenAPI document of endpoints 6–8', () => {
  let h: Harness;
  beforeAll(() => {
    h = createHarness();
  });
  afterAll(() => h.close());

  it('documents the task list with every query parameter, the detail and the history, with both integration credentials', async () => {
    const doc = await readJson<OpenApi>(await h.request('GET', '/api/openapi.json'));
    const list = doc.paths['/api/integration/tasks']!.get!;
    expect(list.parameters!.map((parameter) => parameter.name).sort()).toEqual(
      ['documentId', 'fromDate', 'keyword', 'page', 'pageSize', 'status', 'toDate'].sort(),
    );
    expect(list.security).toEqual([{ ApiKey: [] }, { PartnerToken: [] }]);
    expect(doc.paths['/api/integration/tasks/{taskCode}']!.get!.parameters).toEqual([
      expect.objectContaining({ name: 'taskCode', in: 'path' }),
    ]);
    expect(doc.paths['/api/integration/documents/{documentId}/history']!.get).toBeDefined();
    expect(Object.keys(doc.components.schemas.TaskItem!.properties!)).toEqual([
      'taskId',
      'taskCode',
      'stepCode',
      'stepName',
      'signType',
      'status',
      'assignedAt',
      'expireAt',
      'actionAt',
      'comment',
      'document',
    ]);
    // TaskDetail is the task item plus its own parts.
    expect(doc.components.schemas.TaskDetail).toEqual({
      allOf: [
        { $ref: '#/components/schemas/TaskItem' },
        expect.objectContaining({
          required: ['assignee', 'files', 'attachments', 'history'],
        }),
      ],
    });
  });
});
