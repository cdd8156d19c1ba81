import { presignedUrlLifetimeSeconds } from '../../src/files/presign';
import { hdldBody, openWorld, reply, sha256, uniquePdf, type World } from './fixtures';

let world: World;
beforeAll(async () => {
  world = await openWorld();
});
afterAll(() => world.close());

interface Created {
  statusCode: number;
  timestamp: string;
  data: {
    transactionId: string | null;
    documentId: string;
    documentTitle: string;
    folderId: number;
    documentUuid: string;
    files: Record<string, unknown>[];
    attachments: Record<string, unknown>[];
    status: string;
    createdAt: string;
  };
}

async function created(body: unknown): Promise<Created> {
  const [status, reply_] = await reply<Created>(await world.create(body));
  if (status !== 201) throw new Error(`expected 201, got ${status}: ${JSON.stringify(reply_)}`);
  return reply_;
}

describe('Dossier creation output (endpoint 1)', () => {
  it('answers HTTP 201 with the envelope (body statusCode 200) and every output field', async () => {
    const pdf = uniquePdf();
    const body = hdldBody(world, {
      files: [{ source: 'url', fileUrl: world.serve(pdf), title: 'Hợp đồng lao động' }],
    });
    const response = await world.create(body);
    expect(response.status).toBe(201);
    const { statusCode, timestamp, data } = (await response.json()) as Created;
    expect(statusCode).toBe(200);
    expect(timestamp).toBe(world.h.now());
    expect(data).toEqual({
      transactionId: expect.stringMatching(/^PI[0-9A-F]{16}$/),
      documentId: body.documentId,
      documentTitle: 'Hợp đồng lao động Nguyễn Văn Ánh',
      folderId: expect.any(Number),
      documentUuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      files: [
        {
          id: expect.any(Number),
          fileUuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
          title: 'Hợp đồng lao động',
          type: 'MAIN',
          url: expect.any(String),
          downloadUrl: `/api/integration/files/${data.files[0]?.fileUuid}/download`,
        },
      ],
      attachments: [],
      status: 'PENDING_SIGN',
      createdAt: world.h.now(),
    });
    const url = new URL(String(data.files[0]?.url));
    expect(`${url.origin}${url.pathname}`).toBe(
      `http://127.0.0.1:3000/api/files/${data.files[0]?.fileUuid}`,
    );
    const expires = Number(url.searchParams.get('expires'));
    expect(expires * 1000 - world.h.clock.now().getTime()).toBe(presignedUrlLifetimeSeconds * 1000);
    const version = await world.h.deps.db
      .selectFrom('file_versions')
      .innerJoin('dossier_files', 'dossier_files.id', 'file_versions.file_id')
      .select(['file_versions.version', 'file_versions.sha256', 'file_versions.size'])
      .where('dossier_files.uuid', '=', String(data.files[0]?.fileUuid))
      .execute();
    expect(version).toEqual([{ version: 1, sha256: sha256(pdf), size: pdf.length }]);
  });
});
