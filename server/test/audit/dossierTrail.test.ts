import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { verifyAuditChain } from '../../src/audit/chain';
import { type AuditEventRow, auditEventsOf } from '../../src/audit/queries';
import { dossierTrail } from '../../src/audit/subject';
import { runCli } from '../admin/runCli';
import { contractPdf } from '../contracts/fixtures';
import {
  addProcess,
  documentsPath,
  openWorld,
  partnerToken,
  type World,
} from '../dossiers/fixtures';
import { manualWorker } from '../notify/support';
import { openTask } from '../support/dossiers';
import { runRaw, withoutAppendOnly } from '../support/forcedFailure';

jest.setTimeout(120_000);

/**
 * The dossier audit trail, over HTTP: a dossier created, its task signed through a signing
 * session (cloud_hsm with OTP, one wrong code first), its file downloaded; every step is an
 * event of one hash chain that `admin audit verify --dossier` recomputes, and tampering with
 * the newest event is named.
 */
let world: World;
const partnerAddress = '198.51.100.23';
const userAgent = 'ERP-Acme/4.2 (audit test)';

// biome-ignore lint/suspicious/noExplicitAny: test reads of response bodies
type Body = any;

async function call(
  method: string,
  url: string,
  credential: Record<string, string>,
  json?: unknown,
): Promise<{ status: number; body: Body }> {
  // The TSA and the certificates live in real time.
  if (new Date() > world.h.clock.now()) world.h.clock.set(new Date());
  const response = await world.h.request(method, url, {
    headers: { ...credential, 'user-agent': userAgent, 'x-forwarded-for': partnerAddress },
    ...(json === undefined ? {} : { json }),
  });
  const type = response.headers.get('content-type') ?? '';
  return {
    status: response.status,
    body: type.includes('json') ? await response.json() : Buffer.from(await response.arrayBuffer()),
  };
}

beforeAll(async () => {
  world = await openWorld({ TRUST_PROXY: '1' });
  await addProcess(
    world.h,
    { tenantId: world.acme.tenantId, organizationId: world.acme.rootOrganizationId },
    'KYSO_AUDIT',
    ['HD'],
    [
      {
        stepCode: 'GIAM_DOC',
        name: 'Giám đốc ký số',
        kind: 'internal',
        signType: 'digital_signature',
        defaultUserId: world.directorId,
      },
    ],
  );
});
afterAll(() => world.close());

async function createDossier(): Promise<{ documentId: string; id: number; uuid: string }> {
  const documentId = `AU-${crypto.randomUUID()}`;
  const created = await call(
    'POST',
    documentsPath,
    { 'x-api-key': world.key },
    {
      documentId,
      documentTitle: 'Hợp đồng có nhật ký',
      processDefCode: 'KYSO_AUDIT',
      signers: [],
      files: [{ source: 'url', fileUrl: world.serve(await contractPdf(documentId)), title: 'HĐ' }],
    },
  );
  expect(created.status).toBe(201);
  const row = await world.h.deps.db
    .selectFrom('dossiers')
    .select(['id', 'uuid'])
    .where('document_id', '=', documentId)
    .executeTakeFirstOrThrow();
  return { documentId, ...row };
}

function lastOtp(phone: string): string {
  const file = path.join(world.h.deps.config.notify.smsDir, 'messages.jsonl');
  const texts = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { to: string; text: string })
    .filter((message) => message.to === phone);
  return /\b(\d{6})\b/.exec(texts.at(-1)?.text ?? '')![1]!;
}

const trail = (id: number) => auditEventsOf(world.h.deps.db, dossierTrail(id));
const factsOf = (event: AuditEventRow | undefined) =>
  JSON.parse(event?.details ?? '{}') as Record<string, unknown>;

/** Runs `statement` with the append-only triggers lifted, as an attacker with the file could. */
function tamper(statement: string): Promise<void> {
  return withoutAppendOnly(world.h.runtime.database, 'dossier_audit_events', statement);
}

describe('the dossier audit trail', () => {
  it('holds every step of a task signed through a session; verify recomputes it and names the first broken link after tampering', async () => {
    const { documentId, id, uuid } = await createDossier();
    const director = { 'x-access-token': await partnerToken(world, 'giam.doc') };
    const taskCode = (await openTask(world.h, id))!.code;
    const opened = await call('POST', `/api/tasks/${taskCode}/signing-session`, director, {
      signingMethod: 'cloud_hsm',
    });
    expect(opened.status).toBe(200);
    const step = (name: string, json?: unknown) =>
      call('POST', `/api/signing/${opened.body.data.sessionId}/${name}`, director, json);
    expect((await step('send-otp')).status).toBe(200);
    const worker = manualWorker(world.h.deps);
    await worker.drain();
    await worker.stop();
    const otp = lastOtp('0901000000');
    const wrong = await step('confirm', { otp: otp === '000000' ? '111111' : '000000' });
    expect([wrong.status, wrong.body.code]).toEqual([422, 'OTP_INVALID']);
    const signed = await step('confirm', { otp });
    expect(signed.status).toBe(200);
    expect(signed.body.data.task).toMatchObject({ dossierStatus: 'COMPLETED' });

    const listing = await call('GET', `${documentsPath}/${documentId}/files`, {
      'x-api-key': world.key,
    });
    const file = listing.body.data.files[0];
    const downloaded = await call('GET', `/api/integration/files/${file.fileUuid}/download`, {
      'x-api-key': world.key,
    });
    expect(downloaded.status).toBe(200);
    const presignedUrl = new URL(file.url);
    const presigned = await call('GET', presignedUrl.pathname + presignedUrl.search, {});
    expect(presigned.status).toBe(200);

    const events = await trail(id);
    expect(events.map((event) => event.action)).toEqual([
      'created',
      'session_initiated',
      'otp_sent',
      'otp_failed',
      'signed',
      'completed',
      'downloaded',
      'downloaded',
    ]);
    expect(events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (const event of events) {
      expect(event.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    // Requests carry the forwarded client address (TRUST_PROXY) and the user agent.
    const byRequest = events.filter((event) => event.action !== 'completed');
    for (const event of byRequest) {
      expect([event.action, event.client_address, event.user_agent]).toEqual([
        event.action,
        partnerAddress,
        userAgent,
      ]);
    }
    const [created, initiated, otpSent, otpFailed, signature, completed, apiGet, urlGet] = events;
    expect(created!.actor_kind).toBe('user');
    expect(factsOf(created)).toMatchObject({
      documentId,
      processDefCode: 'KYSO_AUDIT',
      started: true,
    });
    expect(initiated!.actor_name).toContain('Trần Văn Giám');
    expect(factsOf(initiated)).toMatchObject({ taskCode, method: 'cloud_hsm' });
    expect(factsOf(otpSent)).toMatchObject({ channel: 'sms', to: expect.stringContaining('*') });
    expect(factsOf(otpFailed)).toMatchObject({ attempt: 1, locked: false });
    const downloadedSha = crypto.createHash('sha256').update(downloaded.body).digest('hex');
    const originalSha = factsOf(created).files as { sha256: string }[];
    expect(factsOf(signature)).toMatchObject({
      taskCode,
      method: 'cloud_hsm',
      certificateSubject: expect.stringContaining('Trần Văn Giám'),
      certificateSerial: expect.stringMatching(/^[0-9a-fA-F:]+$/),
      timestampTime: expect.any(String),
      documentHashBefore: `sha256:${originalSha[0]!.sha256}`,
      documentHashAfter: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    // The signed version is followed, at completion, by its archive revision (DSS and document
    // timestamp, B-LTA): the version the download serves.
    expect(factsOf(signature).documentHashAfter).not.toBe(`sha256:${downloadedSha}`);
    expect([completed!.actor_kind, completed!.client_address]).toEqual(['system', null]);
    expect(factsOf(completed).archived).toEqual([
      expect.objectContaining({ fileVersion: 3, documentHash: `sha256:${downloadedSha}` }),
    ]);
    expect(factsOf(apiGet)).toMatchObject({ via: 'api', version: 3, sha256: downloadedSha });
    expect([urlGet!.actor_name, factsOf(urlGet).via]).toEqual(['presigned URL', 'presigned_url']);

    const { dataDir } = world.h;
    const holds = await runCli(dataDir, ['audit', 'verify', '--dossier', uuid, '--json']);
    expect([holds.code, holds.stderr]).toEqual([0, '']);
    expect(holds.json()).toMatchObject({ dossierId: uuid, valid: true, events: 8 });
    const both = await runCli(dataDir, ['audit', 'verify', '--dossier', uuid, '--contract', 'x']);
    expect([both.code, both.stderr]).toEqual([2, expect.stringContaining('exactly one of')]);
    const unknown = await runCli(dataDir, ['audit', 'verify', '--dossier', 'nope']);
    expect([unknown.code, unknown.stderr]).toEqual([
      1,
      expect.stringContaining('DOCUMENT_NOT_FOUND'),
    ]);

    // The triggers refuse edits outright.
    const database = world.h.runtime.database;
    await expect(runRaw(database, `UPDATE dossier_audit_events SET action = 'x'`)).rejects.toThrow(
      /append-only/,
    );
    await expect(runRaw(database, 'DELETE FROM dossier_audit_events')).rejects.toThrow(
      /append-only/,
    );

    // Someone rewrites the newest event: named as changed.
    await tamper(
      `UPDATE dossier_audit_events SET actor_name = 'Someone else' WHERE dossier_id = ${id} AND seq = 8`,
    );
    const edited = await runCli(dataDir, ['audit', 'verify', '--dossier', uuid]);
    expect(edited.code).toBe(1);
    expect(edited.stderr).toContain('AUDIT_CHAIN_BROKEN');
    expect(edited.stderr).toContain('broken at event 8: it was changed after it was written');

    // Someone removes it instead: what is left links up, but the head names the missing event.
    await tamper(`DELETE FROM dossier_audit_events WHERE dossier_id = ${id} AND seq = 8`);
    expect(await verifyAuditChain(world.h.deps.db, dossierTrail(id))).toEqual({
      valid: false,
      events: 7,
      brokenAt: 8,
      reason: 'tail_missing',
    });
    const cut = await runCli(dataDir, ['audit', 'verify', '--dossier', uuid]);
    expect(cut.code).toBe(1);
    expect(cut.stderr).toContain(
      'broken at event 8: it is missing: the newest events were removed',
    );
  });

  it('a rejection through a session names who rejected and why; an edited middle event breaks the chain there', async () => {
    const { id } = await createDossier();
    const director = { 'x-access-token': await partnerToken(world, 'giam.doc') };
    const taskCode = (await openTask(world.h, id))!.code;
    const opened = await call('POST', `/api/tasks/${taskCode}/signing-session`, director, {
      signingMethod: 'usb_token',
    });
    const rejected = await call(
      'POST',
      `/api/signing/${opened.body.data.sessionId}/reject`,
      director,
      { reason: 'Sai số tiền' },
    );
    expect(rejected.status).toBe(200);
    const events = await trail(id);
    expect(events.map((event) => event.action)).toEqual([
      'created',
      'session_initiated',
      'rejected',
    ]);
    const rejection = events[2]!;
    expect(rejection.actor_name).toContain('Trần Văn Giám');
    expect([rejection.client_address, rejection.user_agent]).toEqual([partnerAddress, userAgent]);
    expect(factsOf(rejection)).toEqual({ taskCode, reason: 'Sai số tiền' });
    const trailOf = dossierTrail(id);
    expect(await verifyAuditChain(world.h.deps.db, trailOf)).toMatchObject({
      valid: true,
      events: 3,
    });

    await tamper(
      `UPDATE dossier_audit_events SET details = '{"reason":"Đồng ý"}' WHERE dossier_id = ${id} AND seq = 2`,
    );
    expect(await verifyAuditChain(world.h.deps.db, trailOf)).toMatchObject({
      valid: false,
      brokenAt: 2,
      reason: 'content_changed',
    });
    // Details that are no longer a JSON object (its column's schema) are a change, not a crash.
    await tamper(
      `UPDATE dossier_audit_events SET details = '[1]' WHERE dossier_id = ${id} AND seq = 1`,
    );
    expect(await verifyAuditChain(world.h.deps.db, trailOf)).toMatchObject({
      valid: false,
      brokenAt: 1,
      reason: 'content_changed',
    });
  });
});
