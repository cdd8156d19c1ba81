import crypto from 'node:crypto';
import fs from 'node:fs';
import { javaScriptAndLaunch } from '../pdf/hostilePdfs';
import {
  hdldBody,
  openWorld,
  reply,
  rowCounts,
  sha256,
  storedFiles,
  uniquePdf,
  type World,
} from './fixtures';

/**
 * Endpoint 1: a file fetched from a partner's URL is read like a contract upload (the signing
 * engine's reader in the PDF worker pool, under the read limits) before anything is written.
 */

let world: World;
beforeAll(async () => {
  world = await openWorld();
});
afterAll(async () => {
  await world.close();
});

const tempFiles = () => fs.readdirSync(world.h.deps.files.tempDir);

async function refused(body: Record<string, unknown>) {
  const before = await rowCounts(world.h);
  const stored = storedFiles(world.h);
  const [status, error] = await reply(await world.create(body));
  // Nothing written: no row, no stored bytes, no temp file left behind.
  expect(await rowCounts(world.h)).toEqual(before);
  expect(storedFiles(world.h)).toEqual(stored);
  expect(tempFiles()).toEqual([]);
  return { status, code: error.code, field: error.details?.field, message: error.message };
}

describe('Creation (1): fetched files are inspected', () => {
  it('a file with /OpenAction JavaScript and a /Launch link: 422 PDF_ACTIVE_CONTENT naming the file, nothing created', async () => {
    const hostile = await javaScriptAndLaunch();
    const answer = await refused(
      hdldBody(world, { files: [{ source: 'url', fileUrl: world.serve(hostile) }] }),
    );
    expect(answer).toEqual({
      status: 422,
      code: 'PDF_ACTIVE_CONTENT',
      field: 'files.0.fileUrl',
      message: expect.stringContaining('JavaScript'),
    });
    expect(answer.message).toContain('a launch action (/Launch)');
    expect(await world.h.deps.files.exists(sha256(hostile))).toBe(false);
  });

  it('an attachment that does not parse: 422 PDF_UNREADABLE naming it; the good file fetched first is removed', async () => {
    const good = uniquePdf('inspected-good-before-bad');
    const broken = Buffer.from(`%PDF-1.7\n% ${crypto.randomUUID()}, no objects, no xref\n`);
    const answer = await refused(
      hdldBody(world, {
        files: [{ source: 'url', fileUrl: world.serve(good) }],
        attachments: [{ source: 'url', fileUrl: world.serve(broken) }],
      }),
    );
    expect(answer).toEqual({
      status: 422,
      code: 'PDF_UNREADABLE',
      field: 'attachments.0.fileUrl',
      message: expect.stringContaining('cannot be read'),
    });
    expect(await world.h.deps.files.exists(sha256(good))).toBe(false);
    expect(await world.h.deps.files.exists(sha256(broken))).toBe(false);
  });

  it('a good PDF: created, its bytes stored as served', async () => {
    const good = uniquePdf('inspected-good');
    const [status] = await reply(
      await world.create(
        hdldBody(world, { files: [{ source: 'url', fileUrl: world.serve(good), title: 'HĐ' }] }),
      ),
    );
    expect(status).toBe(201);
    expect(await world.h.deps.files.exists(sha256(good))).toBe(true);
  });
});
