import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { presignedUrlLifetimeSeconds, presignFileUrl } from '../../src/files/presign';
import { hdldBody, openWorld, reply, uniquePdf, type World } from '../dossiers/fixtures';

/** Presigned file URLs (`url` of file items): server-signed, valid 24 hours, newest version. */

let world: World;
beforeAll(async () => {
  world = await openWorld();
});
afterAll(() => world.close());

async function dossierWith(pdf: Buffer) {
  const response = await world.create(
    hdldBody(world, { files: [{ source: 'url', fileUrl: world.serve(pdf), title: 'Hợp đồng' }] }),
  );
  const raw = await response.text();
  const { data } = JSON.parse(raw) as {
    data: { files: { id: number; fileUuid: string; url: string }[] };
  };
  return { raw, file: data.files[0]! };
}

/** GET of a presigned URL, by its path and query, with no credential. */
function fetchPresigned(url: string) {
  const parsed = new URL(url);
  return world.h.request('GET', `${parsed.pathname}${parsed.search}`);
}

describe('Presigned file URL', () => {
  it('serves the file without any credential, with the download headers', async () => {
    const pdf = uniquePdf('presigned-ok');
    const { file } = await dossierWith(pdf);
    const response = await fetchPresigned(file.url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-length')).toBe(String(pdf.length));
    expect(response.headers.get('cache-control')).toBe('private, no-store');
    expect(response.headers.get('content-disposition')).toContain(
      'attachment; filename="Hop dong.pdf"',
    );
    expect(Buffer.from(await response.arrayBuffer()).equals(pdf)).toBe(true);
  });

  it('carries a literal & in the JSON (never an escaped \\u0026)', async () => {
    const { raw, file } = await dossierWith(uniquePdf('presigned-ampersand'));
    expect(file.url).toMatch(/\?expires=\d+&signature=[0-9a-f]{64}$/);
    expect(raw).toContain('&signature=');
    expect(raw).not.toContain('\\u0026');
  });

  it('is valid until just before 24 hours', async () => {
    const pdf = uniquePdf('presigned-23h59');
    const { file } = await dossierWith(pdf);
    world.h.clock.advance(presignedUrlLifetimeSeconds * 1000 - 1000);
    const response = await fetchPresigned(file.url);
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).equals(pdf)).toBe(true);
  });

  it('is refused once 24 hours have passed: 410 PRESIGNED_URL_EXPIRED', async () => {
    const { file } = await dossierWith(uniquePdf('presigned-24h'));
    world.h.clock.advance(presignedUrlLifetimeSeconds * 1000);
    const [status, error] = await reply(await fetchPresigned(file.url));
    expect({ status, code: error.code }).toEqual({ status: 410, code: 'PRESIGNED_URL_EXPIRED' });
  });

  it('a tampered signature is refused: 403 PRESIGNED_URL_INVALID', async () => {
    const { file } = await dossierWith(uniquePdf('presigned-tampered'));
    const url = new URL(file.url);
    const signature = url.searchParams.get('signature')!;
    const flipped = `${signature[0] === 'a' ? 'b' : 'a'}${signature.slice(1)}`;
    url.searchParams.set('signature', flipped);
    const [status, error] = await reply(await fetchPresigned(url.toString()));
    expect({ status, code: error.code }).toEqual({ status: 403, code: 'PRESIGNED_URL_INVALID' });
  });

  it('a prolonged expiry is refused: 403 PRESIGNED_URL_INVALID', async () => {
    const { file } = await dossierWith(uniquePdf('presigned-prolonged'));
    const url = new URL(file.url);
    url.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 86400));
    const [status, error] = await reply(await fetchPresigned(url.toString()));
    expect({ status, code: error.code }).toEqual({ status: 403, code: 'PRESIGNED_URL_INVALID' });
  });

  it("another file's signature is refused: 403 PRESIGNED_URL_INVALID", async () => {
    const { file: first } = await dossierWith(uniquePdf('presigned-first'));
    const { file: second } = await dossierWith(uniquePdf('presigned-second'));
    const url = new URL(first.url);
    url.pathname = new URL(second.url).pathname;
    const [status, error] = await reply(await fetchPresigned(url.toString()));
    expect({ status, code: error.code }).toEqual({ status: 403, code: 'PRESIGNED_URL_INVALID' });
  });

  it.each([
    ['no query', ''],
    ['no signature', '?expires=99999999999'],
    ['a signature that is not hex', `?expires=99999999999&signature=${'z'.repeat(64)}`],
    ['an expiry that is not a number', `?expires=soon&signature=${'a'.repeat(64)}`],
  ])('%s is refused: 403 PRESIGNED_URL_INVALID', async (_what, query) => {
    const { file } = await dossierWith(uniquePdf(`presigned-${query}`));
    const [status, error] = await reply(
      await world.h.request('GET', `/api/files/${file.fileUuid}${query}`),
    );
    expect({ status, code: error.code }).toEqual({ status: 403, code: 'PRESIGNED_URL_INVALID' });
  });

  it('serves the newest version', async () => {
    const { file } = await dossierWith(uniquePdf('presigned-v1'));
    const signed = uniquePdf('presigned-v2', 3000);
    const stored = await world.h.deps.files.put(Readable.from([signed]));
    world.h.deps.files.keep(stored);
    await world.h.deps.db
      .insertInto('file_versions')
      .values({
        file_id: file.id,
        version: 2,
        sha256: stored.sha256,
        size: stored.size,
        created_at: world.h.now(),
      })
      .execute();
    const response = await fetchPresigned(file.url);
    expect(Buffer.from(await response.arrayBuffer()).equals(signed)).toBe(true);
  });

  it('a well-signed URL of an unknown file gives 404 FILE_NOT_FOUND', async () => {
    const url = presignFileUrl(world.h.deps, crypto.randomUUID());
    const [status, error] = await reply(await fetchPresigned(url));
    expect({ status, code: error.code }).toEqual({ status: 404, code: 'FILE_NOT_FOUND' });
  });
});
