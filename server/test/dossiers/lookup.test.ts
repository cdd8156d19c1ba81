import { inTransaction } from '../../src/db/database';
import { approve, completeSignedTurn, reject } from '../../src/workflow/actions';
import {
  documentsPath,
  hdldBody,
  openWorld,
  partnerToken,
  reply,
  uniquePdf,
  type World,
} from './fixtures';

/** Endpoints 2 (start), 3 (lookup) and 4 (file listing). */

let world: World;
beforeAll(async () => {
  world = await openWorld();
});
afterAll(() => world.close());

const asKey = (key = world.key) => ({ headers: { 'X-API-Key': key } });

async function createDossier(overrides: Record<string, unknown> = {}) {
  const body = hdldBody(world, overrides);
  const response = await world.create(body);
  const answer = (await response.json()) as {
    data: { folderId: number; documentUuid: string; files: { id: number; fileUuid: string }[] };
  };
  if (response.status !== 201) throw new Error(JSON.stringify(answer));
  return { body, ...answer.data };
}

function lookup(documentId: string, key?: string) {
  return world.h.request('GET', `${documentsPath}/${encodeURIComponent(documentId)}`, asKey(key));
}

function start(documentId: string, key?: string) {
  return world.h.request(
    'POST',
    `${documentsPath}/${encodeURIComponent(documentId)}/start`,
    asKey(key),
  );
}

interface Lookup {
  documentId: string;
  documentUuid: string;
  transactionId: string | null;
  status: string;
  signedCount: number;
  requiredCount: number;
  files: Record<string, unknown>[];
  attachments: Record<string, unknown>[];
  signers: Record<string, unknown>[];
  metadata: Record<string, unknown>;
  createdAt: string;
  completedAt: string | null;
}

async function lookedUp(documentId: string, key?: string): Promise<Lookup> {
  const [status, answer] = await reply<{ statusCode: number; data: Lookup }>(
    await lookup(documentId, key),
  );
  expect([status, answer.statusCode]).toEqual([200, 200]);
  return answer.data;
}

/** The open task of a dossier and the user id of an account. */
async function openTask(folderId: number): Promise<string> {
  const task = await world.h.deps.db
    .selectFrom('tasks')
    .select('code')
    .where('dossier_id', '=', folderId)
    .where('status', '=', 1)
    .executeTakeFirstOrThrow();
  return task.code;
}

async function userId(username: string): Promise<number> {
  const user = await world.h.deps.db
    .selectFrom('users')
    .select('id')
    .where('username', '=', username)
    .executeTakeFirstOrThrow();
  return user.id;
}

/** Signs the open digital_signature turn as `username`, adding version 2 of the main file. */
async function signDigitally(folderId: number, fileId: number, username: string) {
  const signed = await world.h.deps.files.put(
    (async function* () {
      yield uniquePdf(`signed-by-${username}`);
    })() as never,
  );
  world.h.deps.files.keep(signed);
  const taskCode = await openTask(folderId);
  const actorUserId = await userId(username);
  return inTransaction(world.h.deps.db, (trx) =>
    completeSignedTurn(trx, world.h.deps, {
      taskCode,
      actorUserId,
      newFileVersions: [{ fileId, sha256: signed.sha256, size: signed.size }],
    }),
  );
}

describe('Start (2)', () => {
  it('moves PENDING to PENDING_SIGN and creates the first task', async () => {
    const dossier = await createDossier({ disableStart: true });
    const [status, answer] = await reply<{ statusCode: number; data: Record<string, unknown> }>(
      await start(dossier.body.documentId),
    );
    expect(status).toBe(200);
    expect(answer.statusCode).toBe(200);
    expect(answer.data).toEqual({
      documentId: dossier.body.documentId,
      documentUuid: dossier.documentUuid,
      transactionId: expect.stringMatching(/^PI[0-9A-F]{16}$/),
      status: 'PENDING_SIGN',
    });
    const tasks = await world.h.deps.db
      .selectFrom('tasks')
      .select('status')
      .where('dossier_id', '=', dossier.folderId)
      .execute();
    expect(tasks).toEqual([{ status: 1 }]);
    const looked = await lookedUp(dossier.body.documentId);
    expect([looked.status, looked.transactionId]).toEqual([
      'PENDING_SIGN',
      answer.data.transactionId,
    ]);
  });

  it('a second call gives 400 (the dossier is no longer PENDING), nothing changes', async () => {
    const dossier = await createDossier({ disableStart: true });
    expect((await start(dossier.body.documentId)).status).toBe(200);
    const before = await lookedUp(dossier.body.documentId);
    const [status, error] = await reply(await start(dossier.body.documentId));
    expect([status, error.code]).toEqual([400, 'DOSSIER_NOT_PENDING']);
    expect(await lookedUp(dossier.body.documentId)).toEqual(before);
  });

  it('a dossier started at creation (no disableStart) gives 400', async () => {
    const dossier = await createDossier();
    const [status, error] = await reply(await start(dossier.body.documentId));
    expect([status, error.code]).toEqual([400, 'DOSSIER_NOT_PENDING']);
  });

  it('two concurrent starts: one 200, one 400, one task', async () => {
    const dossier = await createDossier({ disableStart: true });
    const answers = await Promise.all([
      start(dossier.body.documentId),
      start(dossier.body.documentId),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
    const tasks = await world.h.deps.db
      .selectFrom('tasks')
      .select('id')
      .where('dossier_id', '=', dossier.folderId)
      .execute();
    expect(tasks).toHaveLength(1);
  });

  it('an outside signer (partner token) cannot start: 403', async () => {
    const dossier = await createDossier({
      disableStart: true,
      signers: [
        { stepCode: 'GUEST', email: 'khoi.dong@example.com', identityNumber: '001099055555' },
        { stepCode: 'PHONE', phone: '0912000321' },
      ],
    });
    const token = await partnerToken(world, '001099055555');
    const response = await world.h.request(
      'POST',
      `${documentsPath}/${dossier.body.documentId}/start`,
      { headers: { 'x-access-token': token } },
    );
    const [status, error] = await reply(response);
    expect([status, error.code]).toEqual([403, 'FORBIDDEN']);
    expect((await lookedUp(dossier.body.documentId)).status).toBe('PENDING');
  });

  it('an unknown documentId gives 404', async () => {
    const [status, error] = await reply(await start('KHONG-CO'));
    expect([status, error.code]).toEqual([404, 'DOCUMENT_NOT_FOUND']);
  });

  it("another organization's dossier gives 404 and is not started", async () => {
    const dossier = await createDossier({ disableStart: true });
    const [status] = await reply(await start(dossier.body.documentId, world.beta.orgKey));
    expect(status).toBe(404);
    expect((await lookedUp(dossier.body.documentId)).status).toBe('PENDING');
  });
});

describe('Dossier lookup output (3)', () => {
  it('has every field; signers in order with identity fields by step kind', async () => {
    const attachment = uniquePdf('lookup-attachment');
    const dossier = await createDossier({
      metadata: { soHopDong: '12/2026/HĐLĐ' },
      attachments: [{ source: 'url', fileUrl: world.serve(attachment), title: 'Phụ lục' }],
      signers: [
        {
          stepCode: 'GUEST',
          fullName: 'Nguyễn Văn Ánh',
          email: 'anh.lookup@example.com',
          identityNumber: '001099077777',
          phone: '0901234567',
        },
        { stepCode: 'PHONE', phone: '0912 000 888', taxCode: '0312345679' },
      ],
    });
    const data = await lookedUp(dossier.body.documentId);
    const mainUuid = dossier.files[0]!.fileUuid;
    expect(data).toEqual({
      documentId: dossier.body.documentId,
      documentUuid: dossier.documentUuid,
      transactionId: expect.stringMatching(/^PI/),
      status: 'PENDING_SIGN',
      signedCount: 0,
      requiredCount: 4,
      files: [
        {
          id: dossier.files[0]!.id,
          fileUuid: mainUuid,
          title: 'Hợp đồng lao động',
          type: 'MAIN',
          ecmClassCode: 'HD_LAO_DONG',
          size: expect.any(Number),
          mimeType: 'application/pdf',
          url: expect.stringContaining(`/api/files/${mainUuid}?expires=`),
          downloadUrl: `/api/integration/files/${mainUuid}/download`,
        },
      ],
      // An attachment without class has no ecmClassCode (omitted, not null).
      attachments: [
        {
          id: expect.any(Number),
          fileUuid: expect.any(String),
          title: 'Phụ lục',
          type: 'ATTACHMENT',
          size: attachment.length,
          mimeType: 'application/pdf',
          url: expect.any(String),
          downloadUrl: expect.stringMatching(/^\/api\/integration\/files\/.+\/download$/),
        },
      ],
      signers: [
        {
          stepName: 'Phòng Pháp chế duyệt',
          stepCode: 'APPROVE',
          status: 'PENDING',
          signedAt: null,
          roleCode: 'PHAP_CHE',
          roleName: 'Phòng Pháp chế',
        },
        {
          stepName: 'Người lao động ký',
          stepCode: 'GUEST',
          status: 'PENDING',
          signedAt: null,
          email: 'anh.lookup@example.com',
          phone: '0901234567',
          identityNumber: '001099077777',
        },
        {
          stepName: 'Người bảo lãnh ký',
          stepCode: 'PHONE',
          status: 'PENDING',
          signedAt: null,
          phone: '0912 000 888',
          taxCode: '0312345679',
        },
        {
          stepName: 'Giám đốc ký',
          stepCode: 'DIRECTOR',
          status: 'PENDING',
          signedAt: null,
          username: 'giam.doc',
        },
      ],
      metadata: { soHopDong: '12/2026/HĐLĐ', tenantCode: 'ACME' },
      createdAt: world.h.now(),
      completedAt: null,
    });
    // Never a numeric user or role id: signers carry only these fields.
    const allowed = ['stepName', 'stepCode', 'status', 'signedAt', 'email', 'phone'];
    allowed.push('identityNumber', 'taxCode', 'username', 'roleCode', 'roleName');
    for (const signer of data.signers) {
      expect(Object.keys(signer).filter((key) => !allowed.includes(key))).toEqual([]);
    }
  });

  it('a disableStart dossier: PENDING with transactionId null', async () => {
    const dossier = await createDossier({ disableStart: true });
    const data = await lookedUp(dossier.body.documentId);
    expect([data.status, data.transactionId]).toEqual(['PENDING', null]);
  });

  it('follows the signatures: counts, signedAt, role signer username, newest file, COMPLETED when signedCount equals requiredCount', async () => {
    const dossier = await createDossier();
    const { documentId } = dossier.body;
    const fileId = dossier.files[0]!.id;

    world.h.clock.advance(60_000);
    await approve(world.h.deps, {
      taskCode: await openTask(dossier.folderId),
      actorUserId: world.lawyerIds[1],
    });
    let data = await lookedUp(documentId);
    expect([data.status, data.signedCount, data.requiredCount]).toEqual(['IN_PROGRESS', 1, 4]);
    expect(data.signers[0]).toEqual({
      stepName: 'Phòng Pháp chế duyệt',
      stepCode: 'APPROVE',
      status: 'SIGNED',
      signedAt: world.h.now(),
      roleCode: 'PHAP_CHE',
      roleName: 'Phòng Pháp chế',
      username: 'phap.che2',
    });

    world.h.clock.advance(60_000);
    await signDigitally(dossier.folderId, fileId, '001099012345');
    data = await lookedUp(documentId);
    expect(data.signers.map((s) => s.status)).toEqual(['SIGNED', 'SIGNED', 'PENDING', 'PENDING']);
    expect(data.signers[1]?.signedAt).toBe(world.h.now());
    const newest = await world.h.deps.db
      .selectFrom('file_versions')
      .select(['size'])
      .where('file_id', '=', fileId)
      .where('version', '=', 2)
      .executeTakeFirstOrThrow();
    expect(data.files[0]?.size).toBe(newest.size);

    await approve(world.h.deps, {
      taskCode: await openTask(dossier.folderId),
      actorUserId: await userId('+84 912-345-678'),
    });
    world.h.clock.advance(60_000);
    await signDigitally(dossier.folderId, fileId, 'giam.doc');
    data = await lookedUp(documentId);
    expect(data.status).toBe('COMPLETED');
    expect(data.signedCount).toBe(data.requiredCount);
    expect(data.completedAt).toBe(world.h.now());
    expect(data.signers.every((s) => s.status === 'SIGNED')).toBe(true);
    expect(data.signers[3]).toMatchObject({ username: 'giam.doc', signedAt: world.h.now() });
  });

  it('a rejecting signer shows REJECTED; the turns left stay PENDING', async () => {
    const dossier = await createDossier();
    await reject(world.h.deps, {
      taskCode: await openTask(dossier.folderId),
      actorUserId: world.lawyerIds[0],
      reason: 'Sai điều khoản',
    });
    const data = await lookedUp(dossier.body.documentId);
    expect(data.status).toBe('REJECTED');
    expect(data.signers.map((s) => [s.status, s.signedAt])).toEqual([
      ['REJECTED', null],
      ['PENDING', null],
      ['PENDING', null],
      ['PENDING', null],
    ]);
    expect(data.signers[0]).toMatchObject({ username: 'phap.che1', roleCode: 'PHAP_CHE' });
  });

  it('an unknown documentId gives 404 DOCUMENT_NOT_FOUND', async () => {
    const [status, error] = await reply(await lookup('KHONG-CO'));
    expect([status, error.code]).toEqual([404, 'DOCUMENT_NOT_FOUND']);
  });

  it("another organization's key gets 404, not the dossier", async () => {
    const dossier = await createDossier();
    const [status, error] = await reply(await lookup(dossier.body.documentId, world.beta.orgKey));
    expect([status, error.code]).toEqual([404, 'DOCUMENT_NOT_FOUND']);
  });

  it('an outside signer with a partner token sees the dossier they take part in, and no other', async () => {
    const mine = await createDossier({
      signers: [
        { stepCode: 'GUEST', email: 'xem@example.com', identityNumber: '001099066666' },
        { stepCode: 'PHONE', phone: '0912000123' },
      ],
    });
    const other = await createDossier();
    const token = await partnerToken(world, '001099066666');
    const headers = { 'x-access-token': token };
    const seen = await world.h.request('GET', `${documentsPath}/${mine.body.documentId}`, {
      headers,
    });
    expect(seen.status).toBe(200);
    const hidden = await world.h.request('GET', `${documentsPath}/${other.body.documentId}`, {
      headers,
    });
    expect(hidden.status).toBe(404);
  });
});

describe('File listing (4)', () => {
  it('lists MAIN files and attachments with their details', async () => {
    const second = uniquePdf('listing-second');
    const dossier = await createDossier({
      files: [
        { source: 'url', fileUrl: world.serve(uniquePdf('listing-first')), title: 'Hợp đồng' },
        { source: 'url', fileUrl: world.serve(second), title: 'Hợp đồng 2', ecmClassCode: 'KHAC' },
      ],
      attachments: [{ source: 'url', fileUrl: world.serve(uniquePdf('listing-attachment')) }],
    });
    const [status, answer] = await reply<{ data: Record<string, unknown> }>(
      await world.h.request('GET', `${documentsPath}/${dossier.body.documentId}/files`, asKey()),
    );
    expect(status).toBe(200);
    const data = answer.data as {
      documentId: string;
      documentUuid: string;
      files: Record<string, unknown>[];
      attachments: Record<string, unknown>[];
    };
    expect(Object.keys(data)).toEqual(['documentId', 'documentUuid', 'files', 'attachments']);
    expect(data.documentId).toBe(dossier.body.documentId);
    expect(data.documentUuid).toBe(dossier.documentUuid);
    expect(data.files.map((f) => [f.title, f.type, f.ecmClassCode, f.mimeType])).toEqual([
      ['Hợp đồng', 'MAIN', 'HD_LAO_DONG', 'application/pdf'],
      ['Hợp đồng 2', 'MAIN', 'KHAC', 'application/pdf'],
    ]);
    expect(data.files[1]?.size).toBe(second.length);
    expect(data.attachments.map((f) => [f.type, f.title])).toEqual([
      ['ATTACHMENT', 'hop-dong.pdf'],
    ]);
    // Creation and listing name the same files.
    expect(data.files.map((f) => f.fileUuid)).toEqual(dossier.files.map((f) => f.fileUuid));
  });

  it('an unknown documentId gives 404', async () => {
    const [status] = await reply(
      await world.h.request('GET', `${documentsPath}/KHONG-CO/files`, asKey()),
    );
    expect(status).toBe(404);
  });
});
