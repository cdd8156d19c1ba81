import crypto from 'node:crypto';
import fs from 'node:fs';
import type { ServerResponse } from 'node:http';
import { routes } from '../../../test/support/httpsServer';
import { forceFailure } from '../support/forcedFailure';
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

/** "Processing is atomic; any failing step rolls everything back." */

let world: World;
beforeAll(async () => {
  world = await openWorld();
});
afterAll(() => world.close());

/** Signers whose accounts do not exist yet, so a rollback must also undo account creation. */
function newSigners(tag: string) {
  const digits = (count: number) => crypto.randomInt(10 ** (count - 1), 10 ** count).toString();
  return [
    { stepCode: 'GUEST', email: `${tag}@example.com`, identityNumber: digits(12) },
    { stepCode: 'PHONE', phone: '0913000111', taxCode: digits(10) },
  ];
}

function tempFiles(): string[] {
  return fs.readdirSync(world.h.deps.files.tempDir);
}

describe('Creation (1) rules: atomicity', () => {
  it('two concurrent creations with one documentId give exactly one dossier and one 409', async () => {
    const documentId = 'HD-CONCURRENT-1';
    const first = uniquePdf('concurrent-a');
    const second = uniquePdf('concurrent-b');
    // Both downloads are held until both requests reached the file server, so both creations
    // have passed the documentId pre-check before either writes.
    const waiting: { response: ServerResponse; bytes: Buffer }[] = [];
    const held = (bytes: Buffer) => (_req: unknown, response: ServerResponse) => {
      waiting.push({ response, bytes });
      if (waiting.length < 2) return;
      for (const held of waiting) routes.bytes(held.bytes)(_req as never, held.response);
    };
    world.server.route('/race/a.pdf', held(first));
    world.server.route('/race/b.pdf', held(second));
    const before = await rowCounts(world.h);
    const body = (path: string) =>
      hdldBody(world, {
        documentId,
        files: [{ source: 'url', fileUrl: world.server.url(path) }],
      });
    const answers = await Promise.all([
      world.create(body('/race/a.pdf')),
      world.create(body('/race/b.pdf')),
    ]);
    expect(waiting).toHaveLength(2);
    const replies = await Promise.all(answers.map((answer) => reply(answer)));
    const statuses = replies.map(([status]) => status).sort();
    expect(statuses).toEqual([201, 409]);
    const loser = replies.find(([status]) => status === 409)![1];
    expect(loser).toMatchObject({
      statusCode: 409,
      code: 'DUPLICATE_DOCUMENT_ID',
      details: { field: 'documentId' },
    });
    const dossiers = await world.h.deps.db
      .selectFrom('dossiers')
      .select('id')
      .where('document_id', '=', documentId)
      .execute();
    expect(dossiers).toHaveLength(1);
    const after = await rowCounts(world.h);
    expect(after.dossiers - before.dossiers).toBe(1);
    expect(after.files - before.files).toBe(1);
    expect(after.turns - before.turns).toBe(4);
    // The winner's bytes stay; the loser's were removed again.
    const winnerIsFirst = replies[0]![0] === 201;
    const [kept, removed] = winnerIsFirst ? [first, second] : [second, first];
    expect(await world.h.deps.files.exists(sha256(kept))).toBe(true);
    expect(await world.h.deps.files.exists(sha256(removed))).toBe(false);
    expect(tempFiles()).toEqual([]);
  });

  it('a failure in the last creation step (the workflow start) leaves nothing behind', async () => {
    const restore = await forceFailure(world.h.runtime.database, {
      table: 'tasks',
      event: 'INSERT',
      message: 'forced failure in the last creation step',
    });
    try {
      const pdf = uniquePdf('last-step-main');
      const attachment = uniquePdf('last-step-attachment');
      const before = await rowCounts(world.h);
      const filesBefore = storedFiles(world.h);
      const body = hdldBody(world, {
        files: [{ source: 'url', fileUrl: world.serve(pdf) }],
        attachments: [{ source: 'url', fileUrl: world.serve(attachment) }],
        signers: newSigners('rollback.guest'),
      });
      // The app answers 500 INTERNAL. Under jest only, better-sqlite3's native addon may build
      // its SqliteError in the realm of an earlier test file of the same worker (the addon keeps
      // the first error constructor it was given), so Hono's `instanceof Error` misses it and
      // app.request rejects instead: both are the same failure.
      const outcome = await world.create(body).then(
        async (response) => {
          const [status, error] = await reply(response);
          return `${status} ${error.code} ${error.message}`;
        },
        (thrown: unknown) => `thrown ${(thrown as Error).message}`,
      );
      expect([
        '500 INTERNAL Internal server error',
        'thrown forced failure in the last creation step',
      ]).toContain(outcome);
      // No dossier, file, version, turn, task or guest account row; no stored byte.
      expect(await rowCounts(world.h)).toEqual(before);
      expect(await world.h.deps.files.exists(sha256(pdf))).toBe(false);
      expect(await world.h.deps.files.exists(sha256(attachment))).toBe(false);
      expect(storedFiles(world.h)).toEqual(filesBefore);
      expect(tempFiles()).toEqual([]);
      const account = await world.h.deps.db
        .selectFrom('users')
        .select('id')
        .where('email', '=', 'rollback.guest@example.com')
        .executeTakeFirst();
      expect(account).toBeUndefined();
    } finally {
      await restore();
    }
    // The same request succeeds once the fault is gone.
    const response = await world.create(hdldBody(world));
    expect(response.status).toBe(201);
  });

  it('a failing file after a fetched one: the fetched bytes are removed, nothing is written', async () => {
    const fetched = uniquePdf('fetched-then-failed');
    world.server.route('/missing.pdf', routes.status(404));
    const before = await rowCounts(world.h);
    const body = hdldBody(world, {
      files: [
        { source: 'url', fileUrl: world.serve(fetched) },
        { source: 'url', fileUrl: world.server.url('/missing.pdf') },
      ],
      signers: newSigners('failed.fetch'),
    });
    const [status, error] = await reply(await world.create(body));
    expect({ status, code: error.code, field: error.details?.field }).toEqual({
      status: 502,
      code: 'FILE_URL_HTTP_STATUS',
      field: 'files.1.fileUrl',
    });
    expect(await rowCounts(world.h)).toEqual(before);
    expect(await world.h.deps.files.exists(sha256(fetched))).toBe(false);
    expect(tempFiles()).toEqual([]);
  });

  it('an unknown template after a fetched file: 400 TEMPLATE_NOT_FOUND and the fetched bytes are removed', async () => {
    const fetched = uniquePdf('fetched-then-template');
    const before = await rowCounts(world.h);
    const body = hdldBody(world, {
      files: [{ source: 'url', fileUrl: world.serve(fetched) }],
      attachments: [{ source: 'template', templateCode: 'KHONG_CO', templateData: { a: 'b' } }],
    });
    const [status, error] = await reply(await world.create(body));
    expect({ status, code: error.code, field: error.details?.field }).toEqual({
      status: 400,
      code: 'TEMPLATE_NOT_FOUND',
      field: 'attachments.0.templateCode',
    });
    expect(await rowCounts(world.h)).toEqual(before);
    expect(await world.h.deps.files.exists(sha256(fetched))).toBe(false);
  });

  it('a rolled-back creation never deletes bytes a committed dossier uses', async () => {
    const shared = uniquePdf('shared-content');
    const url = world.serve(shared);
    const kept = await world.create(hdldBody(world, { files: [{ source: 'url', fileUrl: url }] }));
    expect(kept.status).toBe(201);
    world.server.route('/missing-2.pdf', routes.status(500));
    const failed = await world.create(
      hdldBody(world, {
        files: [
          { source: 'url', fileUrl: url },
          { source: 'url', fileUrl: world.server.url('/missing-2.pdf') },
        ],
      }),
    );
    expect(failed.status).toBe(502);
    expect(await world.h.deps.files.exists(sha256(shared))).toBe(true);
  });
});
