import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { verifyPdfSignatures } from '../../src/signing/verification/verifyPdf';
import { approve } from '../../src/workflow/actions';
import { contractPdf } from '../contracts/fixtures';
import {
  addProcess,
  documentsPath,
  openWorld,
  partnerToken,
  storedFiles,
  type World,
} from '../dossiers/fixtures';
import { manualWorker } from '../notify/support';
import { pdfsig, pdfsigSignatures } from '../signing/pdf/corpus';
import { strokePng } from '../signing/pdf/pngs';
import { dossierRow, openTask } from '../support/dossiers';
import { forceFailure } from '../support/forcedFailure';
import { subscribe } from '../webhooks/fixtures';

jest.setTimeout(120_000);

/**
 * Dossier tasks sign through the signing sessions, over HTTP only: the task's signer opens a
 * session by task code, takes the same steps as a contract signer, and the signature completes
 * the turn with the signed PDF as the MAIN file's next version.
 */
let world: World;
let api: (
  method: string,
  url: string,
  token: string,
  json?: unknown,
) => Promise<{ status: number; body: Record<string, unknown> & { data?: never; code?: string } }>;

beforeAll(async () => {
  world = await openWorld();
  const { h } = world;
  // The director signs, then the lawyer: by an image signature (KYSO), or by an approval that
  // ends the workflow after the last signature (KYSO_DUYET, which archives at that approval).
  const processes = { KYSO: 'image_signature', KYSO_DUYET: 'app_submit' } as const;
  for (const [code, signType] of Object.entries(processes)) {
    await addProcess(
      h,
      { tenantId: world.acme.tenantId, organizationId: world.acme.rootOrganizationId },
      code,
      ['HD'],
      [
        {
          stepCode: 'GIAM_DOC',
          name: 'Giám đốc ký số',
          kind: 'internal',
          signType: 'digital_signature',
          defaultUserId: world.directorId,
        },
        {
          stepCode: 'PHAP_CHE',
          name: signType === 'app_submit' ? 'Pháp chế phê duyệt' : 'Pháp chế ký nháy',
          kind: 'internal',
          signType,
          defaultUserId: world.lawyerIds[0],
        },
      ],
    );
  }
  api = async (method, url, token, json) => {
    // The TSA and the certificates live in real time.
    if (new Date() > h.clock.now()) h.clock.set(new Date());
    const response = await h.request(method, url, {
      headers: { 'x-access-token': token },
      ...(json === undefined ? {} : { json }),
    });
    return { status: response.status, body: (await response.json()) as never };
  };
});
afterAll(() => world.close());

// biome-ignore lint/suspicious/noExplicitAny: test reads of response bodies
type Body = any;

async function createDossier(
  processDefCode = 'KYSO',
): Promise<{ documentId: string; dossierId: number }> {
  const documentId = `KS-${crypto.randomUUID()}`;
  const response = await world.create({
    documentId,
    documentTitle: 'Hợp đồng ký số qua phiên',
    processDefCode,
    signers: [],
    files: [
      {
        source: 'url',
        fileUrl: world.serve(await contractPdf(documentId)),
        title: 'Hợp đồng',
      },
    ],
  });
  expect([response.status, response.status === 201 ? '' : await response.text()]).toEqual([
    201,
    '',
  ]);
  const row = await world.h.deps.db
    .selectFrom('dossiers')
    .select('id')
    .where('document_id', '=', documentId)
    .executeTakeFirstOrThrow();
  return { documentId, dossierId: row.id };
}

/** The dossier's open task (the director holds no role, so no task:view to list it). */
async function pendingTask(dossierId: number): Promise<string> {
  return (await openTask(world.h, dossierId))!.code;
}

function otpFor(phone: string): string {
  const file = path.join(world.h.deps.config.notify.smsDir, 'messages.jsonl');
  const line = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { to: string; text: string })
    .filter((m) => m.to === phone)
    .at(-1);
  return /\b(\d{6})\b/.exec(line?.text ?? '')![1]!;
}

async function deliver() {
  const worker = manualWorker(world.h.deps);
  await worker.drain();
  await worker.stop();
}

/** A `document.completed` body names the dossier and its signed file is `bytes` (its URL serves them). */
async function expectCarries(body: Uint8Array, documentId: string, bytes: Buffer) {
  const data = JSON.parse(Buffer.from(body).toString('utf8')).data;
  expect(data.documentId).toBe(documentId);
  const signedFile = data.files.find((f: Body) => f.type === 'signed_document');
  expect(signedFile).toMatchObject({ sizeBytes: bytes.length });
  const presigned = await world.h.request(
    'GET',
    new URL(signedFile.url).pathname + new URL(signedFile.url).search,
  );
  expect(Buffer.from(await presigned.arrayBuffer()).equals(bytes)).toBe(true);
}

/** What a failed completion must leave as it was. */
async function state(dossierId: number) {
  const db = world.h.deps.db;
  return {
    versions: await db
      .selectFrom('file_versions as v')
      .innerJoin('dossier_files as f', 'f.id', 'v.file_id')
      .select(['v.version', 'v.sha256'])
      .where('f.dossier_id', '=', dossierId)
      .orderBy('v.version')
      .execute(),
    tasks: await db
      .selectFrom('tasks')
      .select(['code', 'status'])
      .where('dossier_id', '=', dossierId)
      .execute(),
    turns: await db
      .selectFrom('turns')
      .select(['status'])
      .where('dossier_id', '=', dossierId)
      .execute(),
    dossier: (await dossierRow(world.h, dossierId)).status,
    history: await db
      .selectFrom('history')
      .select('id')
      .where('dossier_id', '=', dossierId)
      .execute(),
    sessions: await db.selectFrom('signing_sessions').select(['id', 'state']).execute(),
    files: storedFiles(world.h).sort(),
  };
}

describe('dossier tasks sign through the signing sessions', () => {
  it('digital_signature (cloud_hsm) then image_signature: COMPLETED, the file downloads with two valid PAdES signatures, document.completed carries it', async () => {
    const { h } = world;
    await subscribe(h, 'ACME', 'https://127.0.0.1:9/hooks');
    const { documentId, dossierId } = await createDossier();
    const director = await partnerToken(world, 'giam.doc');
    const lawyer = await partnerToken(world, 'phap.che1');
    const task = await pendingTask(dossierId);
    const open = `/api/tasks/${task}/signing-session`;

    // A digital_signature step needs the signer's own certificate; another user has no turn.
    const wrongMethod = await api('POST', open, director, { signingMethod: 'otp_sms' });
    expect([wrongMethod.status, wrongMethod.body.code]).toEqual([
      422,
      'SIGNING_METHOD_NOT_ALLOWED',
    ]);
    const notTheirs = await api('POST', open, lawyer, { signingMethod: 'cloud_hsm' });
    expect([notTheirs.status, notTheirs.body.code]).toEqual([404, 'TASK_NOT_FOUND']);

    const started = await api('POST', open, director, { signingMethod: 'cloud_hsm' });
    expect(started.status).toBe(200);
    const session = (started.body as Body).data;
    expect(session).toMatchObject({
      taskCode: task,
      contractHash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      signingUrl: expect.stringContaining('/ky-so/phien/'),
    });
    const step = (name: string, token: string, json?: unknown) =>
      api('POST', `/api/signing/${session.sessionId}/${name}`, token, json);

    // The session is the director's: another user's credential does not see it.
    const foreign = await step('send-otp', lawyer);
    expect([foreign.status, foreign.body.code]).toEqual([404, 'SESSION_NOT_FOUND']);
    const sent = await step('send-otp', director);
    expect(sent.status).toBe(200);
    expect((sent.body as Body).data.channel).toBe('sms');
    await deliver();
    const otp = otpFor('0901000000');

    // Atomicity: the workflow's completion fails inside the finalize transaction (its history
    // insert refused): no file version, the task, turns, session and store unchanged.
    const before = await state(dossierId);
    const restore = await forceFailure(h.runtime.database, {
      table: 'history',
      event: 'INSERT',
      message: 'refused by the test',
    });
    // A 500 from the app, or the SQLite error itself when it comes from another jest realm.
    const failed = await step('confirm', director, { otp })
      .then((response) => response.status)
      .catch((error: unknown) => (String(error).includes('refused by the test') ? 500 : error))
      .finally(restore);
    expect(failed).toBe(500);
    // Confirm prepares the revision anew (its /M is the moment of signing): besides the
    // preparation the session now holds (which the retry replaces), nothing changed.
    const held = await h.deps.db
      .selectFrom('signing_sessions as s')
      .innerJoin('signature_preparations as p', 'p.id', 's.preparation_id')
      .select('p.prepared_sha256')
      .where('s.public_id', '=', session.sessionId)
      .executeTakeFirstOrThrow();
    const after = await state(dossierId);
    const besides = (files: string[]) => files.filter((f) => f !== held.prepared_sha256);
    expect({ ...after, files: besides(after.files) }).toEqual({
      ...before,
      files: besides(before.files),
    });

    const signed = await step('confirm', director, { otp });
    expect(signed.status).toBe(200);
    const first = (signed.body as Body).data;
    expect(first).toMatchObject({
      signatureId: expect.any(String),
      certificateInfo: { subject: expect.stringContaining('Trần Văn Giám') },
      task: {
        taskCode: task,
        taskStatus: 'APPROVED',
        documentId,
        dossierStatus: 'IN_PROGRESS',
        signedCount: 1,
        requiredCount: 2,
      },
    });
    expect(first.contractStatus).toBeUndefined();
    const again = await step('confirm', director, { otp });
    expect([again.status, again.body.code]).toEqual([409, 'TASK_ALREADY_HANDLED']);

    // The image_signature step: the picture drawn, sealed with the service key; through the
    // signing page's link this time.
    const next = first.task.nextTaskCode as string;
    expect(await pendingTask(dossierId)).toBe(next);
    const sealOnly = await api('POST', `/api/tasks/${next}/signing-session`, lawyer, {
      signingMethod: 'usb_token',
    });
    expect([sealOnly.status, sealOnly.body.code]).toEqual([422, 'SIGNING_METHOD_NOT_ALLOWED']);
    const imageSession = (
      (
        await api('POST', `/api/tasks/${next}/signing-session`, lawyer, {
          signingMethod: 'image_signature',
        })
      ).body as Body
    ).data;
    const token = new URL(imageSession.signingUrl).pathname.split('/').at(-1);
    const page = await h.request('POST', '/api/signing/page-credential', { json: { token } });
    const pageData = ((await page.json()) as Body).data;
    expect(pageData).toMatchObject({
      task: { id: next, title: 'Hợp đồng ký số qua phiên' },
      signer: { name: 'Lê Thị Luật' },
    });
    expect(pageData.contract).toBeUndefined();
    const picture = `data:image/png;base64,${strokePng().toString('base64')}`;
    h.clock.set(new Date());
    const imaged = await h.request('POST', `/api/signing/${imageSession.sessionId}/confirm`, {
      headers: { 'x-signing-token': pageData.pageCredential },
      json: { signatureImage: picture },
    });
    expect(imaged.status).toBe(200);
    const second = ((await imaged.json()) as Body).data;
    expect(second.task).toMatchObject({ dossierStatus: 'COMPLETED', signedCount: 2 });
    expect(second.certificateInfo.subject).not.toContain('Lê Thị Luật'); // the seal

    // The existing download route serves the newest version: two valid signatures.
    const listing = await h.request('GET', `${documentsPath}/${documentId}/files`, {
      headers: { 'x-api-key': world.key },
    });
    const files = ((await listing.json()) as Body).data.files;
    const download = await h.request(
      'GET',
      `/api/integration/files/${files[0].fileUuid}/download`,
      {
        headers: { 'x-api-key': world.key },
      },
    );
    expect(download.status).toBe(200);
    const bytes = Buffer.from(await download.arrayBuffer());
    const file = path.join(h.dataDir, 'dossier-signed.pdf');
    fs.writeFileSync(file, bytes);
    // Then the archive revision the completion added (B-LTA): pdfsig lists its document
    // timestamp (poppler does not validate RFC 3161 ones, so it is not "valid" for pdfsig).
    const report = pdfsig(file);
    const verdicts = pdfsigSignatures(report);
    expect(verdicts.map((s) => s.valid)).toEqual([true, true, false]);
    expect(verdicts[2]!.text).toContain('Signature Field Name: DocumentTimestamp1');
    expect(verdicts[2]!.total).toBe(true);
    expect(report).toContain('Trần Văn Giám');
    // The engine's verification: the DSS answers for every chain, covered by the document
    // timestamp.
    const verification = await verifyPdfSignatures(h.deps, file, {
      tenantId: world.acme.tenantId,
    });
    expect(verification.isValid).toBe(true);
    expect(
      verification.signatures.map((s) => [
        s.fieldName === 'DocumentTimestamp1',
        s.isValid,
        s.level,
      ]),
    ).toEqual([
      [false, true, 'B-LTA'],
      [false, true, 'B-LTA'],
      [true, true, 'B-T'],
    ]);
    // Versions: the original, one per signature, the archive, which is what is served.
    const versions = (await state(dossierId)).versions;
    expect(versions.map((v) => v.version)).toEqual([1, 2, 3, 4]);
    const sha = crypto.createHash('sha256').update(bytes).digest('hex');
    expect(versions[3]!.sha256).toBe(sha);
    // The completion's audit event names the archive and the levels verification gives.
    const trail = await h.deps.db
      .selectFrom('dossier_audit_events')
      .select(['action', 'details'])
      .where('dossier_id', '=', dossierId)
      .execute();
    const completed = trail.find((event) => event.action === 'completed')!;
    expect(JSON.parse(completed.details).archived).toEqual([
      {
        fileUuid: files[0].fileUuid,
        fileVersion: 4,
        documentHash: `sha256:${sha}`,
        documentTimestamp: {
          fieldName: 'DocumentTimestamp1',
          genTime: expect.any(String),
          tsa: expect.any(String),
        },
        levels: Object.fromEntries(
          verification.signatures.slice(0, 2).map((s) => [s.fieldName, s.level]),
        ),
      },
    ]);

    // document.completed names the archived file; its presigned URL serves those bytes.
    const event = await h.deps.db
      .selectFrom('webhook_events')
      .select('body')
      .where('type', '=', 'document.completed')
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow();
    await expectCarries(event.body, documentId, bytes);
  });

  it('an approval after the last signature completes the dossier with the archive; a TSA failure refuses it, nothing written', async () => {
    const { h } = world;
    await subscribe(h, 'ACME', 'https://127.0.0.1:9/hooks');
    const { documentId, dossierId } = await createDossier('KYSO_DUYET');
    const director = await partnerToken(world, 'giam.doc');
    const started = await api(
      'POST',
      `/api/tasks/${await pendingTask(dossierId)}/signing-session`,
      director,
      {
        signingMethod: 'cloud_hsm',
      },
    );
    const sessionId = (started.body as Body).data.sessionId;
    await api('POST', `/api/signing/${sessionId}/send-otp`, director);
    await deliver();
    const signed = await api('POST', `/api/signing/${sessionId}/confirm`, director, {
      otp: otpFor('0901000000'),
    });
    expect(signed.status).toBe(200);
    // The last signature, but not the end of the workflow: the file is the signed one.
    expect((signed.body as Body).data.task).toMatchObject({
      dossierStatus: 'IN_PROGRESS',
      signedCount: 1,
    });
    expect((await state(dossierId)).versions.map((v) => v.version)).toEqual([1, 2]);

    // The approval that completes the dossier archives first: a TSA that fails (nothing
    // listens on port 9) refuses it with 502 TIMESTAMP_FAILED, and nothing changed.
    const approval = { taskCode: await pendingTask(dossierId), actorUserId: world.lawyerIds[0]! };
    const completions = () =>
      h.deps.db
        .selectFrom('webhook_events')
        .select('body')
        .where('type', '=', 'document.completed')
        .execute();
    const before = { ...(await state(dossierId)), completions: (await completions()).length };
    const tsa = h.deps.config.tsa as { url?: string };
    const url = tsa.url;
    tsa.url = 'https://127.0.0.1:9/tsa';
    const refused = await approve(h.deps, approval).then(
      () => null,
      (error: unknown) => error,
    );
    tsa.url = url;
    expect(refused).toMatchObject({ code: 'TIMESTAMP_FAILED' });
    expect({ ...(await state(dossierId)), completions: (await completions()).length }).toEqual(
      before,
    );

    // Retried with the TSA back: COMPLETED, the archive is version 3 and what is served.
    h.clock.set(new Date());
    expect(await approve(h.deps, approval)).toMatchObject({
      dossierStatus: 'COMPLETED',
      signedCount: 2,
    });
    const versions = (await state(dossierId)).versions;
    expect(versions.map((v) => v.version)).toEqual([1, 2, 3]);
    const listing = await h.request('GET', `${documentsPath}/${documentId}/files`, {
      headers: { 'x-api-key': world.key },
    });
    const fileUuid = ((await listing.json()) as Body).data.files[0].fileUuid;
    const download = await h.request('GET', `/api/integration/files/${fileUuid}/download`, {
      headers: { 'x-api-key': world.key },
    });
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(crypto.createHash('sha256').update(bytes).digest('hex')).toBe(versions[2]!.sha256);
    const file = path.join(h.dataDir, 'dossier-approved.pdf');
    fs.writeFileSync(file, bytes);
    const verdicts = pdfsigSignatures(pdfsig(file));
    expect(verdicts.map((s) => s.valid)).toEqual([true, false]);
    expect(verdicts[1]!.text).toContain('Signature Field Name: DocumentTimestamp1');
    const verification = await verifyPdfSignatures(h.deps, file, {
      tenantId: world.acme.tenantId,
    });
    expect(verification.signatures.map((s) => [s.isValid, s.level])).toEqual([
      [true, 'B-LTA'],
      [true, 'B-T'],
    ]);

    // document.completed, written by the approval, carries the archive.
    const events = await completions();
    expect(events).toHaveLength(before.completions + 1);
    await expectCarries(events.at(-1)!.body, documentId, bytes);
  });

  it('reject through a session rejects the task and the dossier', async () => {
    const { dossierId } = await createDossier();
    const director = await partnerToken(world, 'giam.doc');
    const task = await pendingTask(dossierId);
    const session = (
      (
        await api('POST', `/api/tasks/${task}/signing-session`, director, {
          signingMethod: 'cloud_hsm',
        })
      ).body as Body
    ).data;
    const rejected = await api('POST', `/api/signing/${session.sessionId}/reject`, director, {
      reason: 'Sai số tiền',
    });
    expect(rejected.status).toBe(200);
    expect((rejected.body as Body).data.task).toMatchObject({
      taskStatus: 'REJECTED',
      dossierStatus: 'REJECTED',
    });
    expect((await dossierRow(world.h, dossierId)).status).toBe('REJECTED');
    const late = await api('POST', `/api/signing/${session.sessionId}/send-otp`, director);
    expect([late.status, late.body.code]).toEqual([409, 'DOSSIER_ENDED']);
  });
});
