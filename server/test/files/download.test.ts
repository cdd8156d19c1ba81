import fs from 'node:fs';
import http from 'node:http';
import { Readable } from 'node:stream';
import { contentDisposition, downloadName } from '../../src/files/download';
import { nodeBodyStats } from '../../src/platform/nodeBody';
import {
  hdldBody,
  openWorld,
  partnerToken,
  reply,
  sha256,
  uniquePdf,
  type World,
} from '../dossiers/fixtures';
import { type Listening, listen } from '../support/listening';

/** Endpoint 5: GET /api/integration/files/{fileUuid}/download. */

let world: World;
beforeAll(async () => {
  world = await openWorld();
});
afterAll(() => world.close());

async function dossierWith(pdf: Buffer, overrides: Record<string, unknown> = {}) {
  const body = hdldBody(world, {
    files: [{ source: 'url', fileUrl: world.serve(pdf), title: 'Hợp đồng lao động' }],
    ...overrides,
  });
  const response = await world.create(body);
  const { data } = (await response.json()) as {
    data: { folderId: number; files: { id: number; fileUuid: string; downloadUrl: string }[] };
  };
  expect(response.status).toBe(201);
  return { body, folderId: data.folderId, file: data.files[0]! };
}

function download(fileUuid: string, headers: Record<string, string> = { 'X-API-Key': world.key }) {
  return world.h.request('GET', `/api/integration/files/${fileUuid}/download`, { headers });
}

/** Adds version `version` of a file as a signature would (bytes stored, row inserted). */
async function addVersion(fileId: number, version: number, bytes: Buffer) {
  const stored = await world.h.deps.files.put(Readable.from([bytes]));
  world.h.deps.files.keep(stored);
  await world.h.deps.db
    .insertInto('file_versions')
    .values({
      file_id: fileId,
      version,
      sha256: stored.sha256,
      size: stored.size,
      created_at: world.h.now(),
    })
    .execute();
}

describe('Download (5)', () => {
  it('streams the file with exactly the listed headers', async () => {
    const pdf = uniquePdf('download-headers', 300_000);
    const { file } = await dossierWith(pdf);
    const response = await download(file.fileUuid);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="Hop dong lao dong.pdf"; filename*=UTF-8''H%E1%BB%A3p%20%C4%91%E1%BB%93ng%20lao%20%C4%91%E1%BB%99ng.pdf`,
    );
    expect(response.headers.get('content-length')).toBe(String(pdf.length));
    expect(response.headers.get('cache-control')).toBe('private, no-store');
    expect(response.headers.get('location')).toBeNull();
    expect(Buffer.from(await response.arrayBuffer()).equals(pdf)).toBe(true);
  });

  it('the downloadUrl of the creation response is this endpoint', async () => {
    const pdf = uniquePdf('download-url');
    const { file } = await dossierWith(pdf);
    const response = await world.h.request('GET', file.downloadUrl, {
      headers: { 'X-API-Key': world.key },
    });
    expect(response.status).toBe(200);
    expect(sha256(Buffer.from(await response.arrayBuffer()))).toBe(sha256(pdf));
  });

  it('streams the content in chunks from disk (no full-file buffer)', async () => {
    const pdf = uniquePdf('download-stream', 2 * 1024 * 1024);
    const { file } = await dossierWith(pdf);
    const response = await download(file.fileUuid);
    const reader = response.body!.getReader();
    const chunks: Uint8Array[] = [];
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      chunks.push(read.value);
    }
    expect(chunks.length).toBeGreaterThan(1);
    expect(Math.max(...chunks.map((chunk) => chunk.length))).toBeLessThan(pdf.length);
    expect(Buffer.concat(chunks).equals(pdf)).toBe(true);
  });

  it('always returns the newest version', async () => {
    const original = uniquePdf('version-1');
    const signed = uniquePdf('version-2', 4096);
    const resigned = uniquePdf('version-3', 5000);
    const { file } = await dossierWith(original);
    await addVersion(file.id, 2, signed);
    let response = await download(file.fileUuid);
    expect(response.headers.get('content-length')).toBe(String(signed.length));
    expect(Buffer.from(await response.arrayBuffer()).equals(signed)).toBe(true);
    await addVersion(file.id, 3, resigned);
    response = await download(file.fileUuid);
    expect(Buffer.from(await response.arrayBuffer()).equals(resigned)).toBe(true);
  });

  it.each(['PENDING', 'COMPLETED', 'REJECTED', 'EXPIRED'] as const)(
    'works in any dossier state (%s)',
    async (status) => {
      const pdf = uniquePdf(`state-${status}`);
      const { folderId, file } = await dossierWith(pdf, { disableStart: true });
      await world.h.deps.db
        .updateTable('dossiers')
        .set({ status })
        .where('id', '=', folderId)
        .execute();
      const response = await download(file.fileUuid);
      expect(response.status).toBe(200);
      expect(Buffer.from(await response.arrayBuffer()).equals(pdf)).toBe(true);
    },
  );

  it('a file of another organization gives 404 FILE_NOT_FOUND', async () => {
    const { file } = await dossierWith(uniquePdf('other-org'));
    const [status, error] = await reply(
      await download(file.fileUuid, { 'X-API-Key': world.beta.orgKey }),
    );
    expect({ status, code: error.code }).toEqual({ status: 404, code: 'FILE_NOT_FOUND' });
  });

  it.each([
    ['an unknown uuid', '3f1c1f2e-9a55-4a47-9d4e-1c2b3a4d5e6f'],
    ['not a uuid', 'x%27%20OR%201=1'],
  ])('%s gives 404 FILE_NOT_FOUND', async (_what, fileUuid) => {
    const [status, error] = await reply(await download(fileUuid));
    expect({ status, code: error.code }).toEqual({ status: 404, code: 'FILE_NOT_FOUND' });
  });

  it('without credentials: 401', async () => {
    const { file } = await dossierWith(uniquePdf('no-credentials'));
    const [status, error] = await reply(await download(file.fileUuid, {}));
    expect({ status, code: error.code }).toEqual({ status: 401, code: 'UNAUTHORIZED' });
  });

  it('an outside signer downloads the files of their dossier, and no other', async () => {
    const pdf = uniquePdf('signer-download');
    const { file } = await dossierWith(pdf, {
      signers: [
        { stepCode: 'GUEST', email: 'tai.ve@example.com', identityNumber: '001099044444' },
        { stepCode: 'PHONE', phone: '0912000432' },
      ],
    });
    const { file: other } = await dossierWith(uniquePdf('not-signer-download'));
    const token = await partnerToken(world, '001099044444');
    const mine = await download(file.fileUuid, { 'x-access-token': token });
    expect(mine.status).toBe(200);
    expect(Buffer.from(await mine.arrayBuffer()).equals(pdf)).toBe(true);
    const [status, error] = await reply(
      await download(other.fileUuid, { 'x-access-token': token }),
    );
    expect({ status, code: error.code }).toEqual({ status: 404, code: 'FILE_NOT_FOUND' });
  });
});

describe('Download over the real server', () => {
  let served: Listening;
  beforeAll(async () => {
    served = await listen(world.h.app, world.h.deps.logger);
  });
  afterAll(() => served.close());

  /** GET over a socket; resolves with the status, headers and body bytes. */
  function get(path: string, headers: Record<string, string>, method = 'GET') {
    return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>(
      (resolve, reject) => {
        const request = http.request(
          { host: '127.0.0.1', port: served.port, path, method, headers, agent: false },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () =>
              resolve({
                status: response.statusCode ?? 0,
                headers: response.headers,
                body: Buffer.concat(chunks),
              }),
            );
            response.on('error', reject);
          },
        );
        request.on('error', reject);
        request.end();
      },
    );
  }

  it('pipes the stored file to the socket with the same headers as in-process', async () => {
    const pdf = uniquePdf('download-socket', 3 * 1024 * 1024);
    const { file } = await dossierWith(pdf);
    const path = `/api/integration/files/${file.fileUuid}/download`;
    const piped = nodeBodyStats.piped;
    const answer = await get(path, { 'X-API-Key': world.key });
    expect(answer.status).toBe(200);
    expect(nodeBodyStats.piped).toBe(piped + 1);
    expect(answer.body.equals(pdf)).toBe(true);
    const inProcess = await download(file.fileUuid);
    await inProcess.body?.cancel();
    const wanted = ['content-type', 'content-disposition', 'content-length', 'cache-control'];
    for (const name of wanted) {
      expect({ name, value: answer.headers[name] }).toEqual({
        name,
        value: inProcess.headers.get(name),
      });
    }
    // Every header the app set arrives (the server adds only date, connection, keep-alive).
    const own = new Set(['date', 'connection', 'keep-alive']);
    expect(
      Object.keys(answer.headers)
        .filter((name) => !own.has(name))
        .sort(),
    ).toEqual([...inProcess.headers.keys()].sort());
  });

  it('answers HEAD with the headers and no body', async () => {
    const pdf = uniquePdf('download-head', 200_000);
    const { file } = await dossierWith(pdf);
    const path = `/api/integration/files/${file.fileUuid}/download`;
    const answer = await get(path, { 'X-API-Key': world.key }, 'HEAD');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-length']).toBe(String(pdf.length));
    expect(answer.body.length).toBe(0);
  });

  it('closes the stored file a HEAD request opened', async () => {
    const pdf = uniquePdf('download-head-close', 100_000);
    const { file } = await dossierWith(pdf);
    const path = `/api/integration/files/${file.fileUuid}/download`;
    const storedOpen = () =>
      fs
        .readdirSync('/proc/self/fd')
        .map((fd) => {
          try {
            return fs.readlinkSync(`/proc/self/fd/${fd}`);
          } catch {
            return '';
          }
        })
        .filter((target) => target.includes(sha256(pdf))).length;
    for (let i = 0; i < 5; i++) {
      expect((await get(path, { 'X-API-Key': world.key }, 'HEAD')).status).toBe(200);
      const inProcess = await world.h.app.request(path, {
        method: 'HEAD',
        headers: { 'X-API-Key': world.key },
      });
      expect(inProcess.status).toBe(200);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(storedOpen()).toBe(0);
  });

  it('survives a client that goes away mid-file, and serves the next one whole', async () => {
    const pdf = uniquePdf('download-abort', 8 * 1024 * 1024);
    const { file } = await dossierWith(pdf);
    const path = `/api/integration/files/${file.fileUuid}/download`;
    await new Promise<void>((resolve, reject) => {
      const request = http.get(
        { host: '127.0.0.1', port: served.port, path, headers: { 'X-API-Key': world.key } },
        (response) => {
          response.once('data', () => {
            request.destroy();
            resolve();
          });
        },
      );
      request.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ECONNRESET') reject(error);
      });
    });
    const answer = await get(path, { 'X-API-Key': world.key });
    expect(answer.status).toBe(200);
    expect(answer.body.equals(pdf)).toBe(true);
  });
});

describe('Content-Disposition of Vietnamese titles', () => {
  it('gives an ASCII fallback and the UTF-8 name (RFC 5987)', () => {
    expect(contentDisposition('Biên bản Đặt cọc.pdf')).toBe(
      `attachment; filename="Bien ban Dat coc.pdf"; filename*=UTF-8''Bi%C3%AAn%20b%E1%BA%A3n%20%C4%90%E1%BA%B7t%20c%E1%BB%8Dc.pdf`,
    );
  });

  it('a plain ASCII name needs no filename*', () => {
    expect(contentDisposition('contract.pdf')).toBe('attachment; filename="contract.pdf"');
  });

  it('quotes, path separators and controls never reach the header', () => {
    const name = downloadName('a"b/c\\d\r\ne', 'application/pdf');
    expect(name).toBe('a"b_c_d__e.pdf');
    expect(contentDisposition(name)).toBe(
      `attachment; filename="a_b_c_d__e.pdf"; filename*=UTF-8''a%22b_c_d__e.pdf`,
    );
  });

  it('adds .pdf to a PDF title without it, keeps other names', () => {
    expect(downloadName('Hợp đồng', 'application/pdf')).toBe('Hợp đồng.pdf');
    expect(downloadName('Hợp đồng.PDF', 'application/pdf')).toBe('Hợp đồng.PDF');
    expect(downloadName('   ', 'application/pdf')).toBe('file.pdf');
  });
});
