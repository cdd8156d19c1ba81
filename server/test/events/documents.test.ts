import crypto from 'node:crypto';
import { subscribableEvents } from '../../src/webhooks/subscriptions';
import { expireOverdueTasks } from '../../src/workflow/deadlines';
import { createDossier, dossierRow } from '../support/dossiers';
import { forceFailure } from '../support/forcedFailure';
import { readJson } from '../support/harness';
import { accountOf, day } from '../workflow/world';
import {
  acknowledgeAs,
  anh,
  approveAs,
  binh,
  completeHdmb,
  type EventSetup,
  envelopeOf,
  eventSetup,
  failureOf,
  hdmbDossier,
  receivedOf,
  rejectAs,
  signAsAnh,
  tick,
} from './fixtures';

/** The receiver recipe of the spec with plain node:crypto: HMAC-SHA256 of the raw bytes. */
function verifies(raw: Buffer, header: string | string[] | undefined, secret: string): boolean {
  const expected = Buffer.from(
    `sha256=${crypto.createHmac('sha256', secret).update(raw).digest('hex')}`,
  );
  const presented = Buffer.from(String(header));
  return presented.length === expected.length && crypto.timingSafeEqual(presented, expected);
}

/** The signer item of Ánh (KH) once signed. */
function anhSigned(signedAt: string | null) {
  return {
    stepName: 'Khách hàng ký',
    stepCode: 'KH',
    email: anh.email,
    phone: anh.phone,
    identityNumber: anh.identityNumber,
    status: 'SIGNED',
    signedAt,
  };
}

/** When the turn of `stepCode` acted. */
async function actedAt(dossierId: number, stepCode: string): Promise<string | null> {
  const row = await s.h.deps.db
    .selectFrom('turns')
    .innerJoin('process_steps', 'process_steps.id', 'turns.step_id')
    .select('turns.acted_at')
    .where('turns.dossier_id', '=', dossierId)
    .where('process_steps.step_code', '=', stepCode)
    .executeTakeFirstOrThrow();
  return row.acted_at;
}

let s: EventSetup;
beforeEach(async () => {
  s = await eventSetup();
});
afterEach(() => s.close());

describe('document.completed', () => {
  test('a dossier completed end to end reaches the receiver once, signed, field by field', async () => {
    const { h, world, receiver, worker } = s;
    const sub = await s.subscribe('/hooks'); // document.* by default
    const created = await hdmbDossier(world, 'HD-100');
    const signed = await completeHdmb(world, created);
    const dossier = await dossierRow(h, created.id);
    expect(dossier.status).toBe('COMPLETED');

    await worker.drain();
    expect(receiver.at('/hooks')).toHaveLength(1); // no notification.* without opting in
    const [request] = receivedOf(receiver, '/hooks', 'document.completed');
    expect(verifies(request!.raw, request!.headers['x-webhook-signature'], sub.secret)).toBe(true);

    const envelope = envelopeOf(request!);
    expect(envelope.id).toBe(request!.headers['x-webhook-id']);
    expect(envelope.id).toMatch(/^evt_[0-9a-f-]{36}$/);
    expect(envelope.type).toBe('document.completed');
    expect(envelope.createdAt).toBe(dossier.completed_at);

    const files = await h.deps.db
      .selectFrom('dossier_files')
      .select(['uuid', 'kind'])
      .where('dossier_id', '=', created.id)
      .orderBy('id')
      .execute();
    const [main, attachment] = files;
    const expiresAt = new Date(
      new Date(dossier.completed_at!).getTime() + day * 1000,
    ).toISOString();
    expect(envelope.data).toEqual({
      documentId: 'HD-100',
      documentUuid: dossier.uuid,
      documentTitle: 'Hợp đồng HD-100 & phụ lục',
      transactionId: dossier.transaction_id,
      status: 'COMPLETED',
      completedAt: dossier.completed_at,
      files: [
        {
          type: 'signed_document',
          url: expect.stringMatching(
            new RegExp(
              `^http://127\\.0\\.0\\.1:3000/api/files/${main!.uuid}\\?expires=\\d+&signature=[0-9a-f]{64}$`,
            ),
          ),
          expiresAt,
          name: 'Hợp đồng mua bán.pdf',
          mimeType: 'application/pdf',
          sizeBytes: signed.length,
          ecmNodeUuid: main!.uuid,
          ecmClassCode: 'HDMB',
        },
        {
          type: 'input_document',
          url: expect.stringContaining(`/api/files/${attachment!.uuid}?expires=`),
          expiresAt,
          name: 'CCCD.pdf',
          mimeType: 'application/pdf',
          sizeBytes: expect.any(Number),
          ecmNodeUuid: attachment!.uuid,
          ecmClassCode: null,
        },
      ],
      signedCount: 4,
      totalSigners: 2,
      // Outside signers only: the internal step DUYET and the role step KTT are left out.
      signers: [
        anhSigned(await actedAt(created.id, 'KH')),
        {
          stepName: 'Đối tác ký',
          stepCode: 'DT',
          email: null,
          phone: binh.phone,
          status: 'SIGNED',
          signedAt: await actedAt(created.id, 'DT'),
        },
      ],
      metadata: { contractNo: 'C-77', tenantCode: 'ACME' },
    });

    // `&` is literal in the bytes on the wire, and the URL works as parsed.
    const raw = request!.raw.toString('utf8');
    expect(raw).toContain('&signature=');
    expect(raw).not.toContain('\\u0026');
    const files0 = (envelope.data.files as { url: string }[])[0]!;
    const presigned = await h.request('GET', files0.url.replace('http://127.0.0.1:3000', ''));
    expect(presigned.status).toBe(200);
    expect(Buffer.from(await presigned.arrayBuffer())).toEqual(signed);

    // requiredCount of the lookup counts every step; totalSigners only the outside signers.
    const lookup = await h.request('GET', '/api/integration/documents/HD-100', {
      headers: { 'X-API-Key': world.adminKey },
    });
    const looked = await readJson<{ data: { requiredCount: number; signedCount: number } }>(lookup);
    expect(looked.data.requiredCount).toBe(4);
    expect(looked.data.signedCount).toBe(4);

    // ecmNodeUuid is the fileUuid of the download endpoint: it serves the newest (signed) version.
    const download = await h.request('GET', `/api/integration/files/${main!.uuid}/download`, {
      headers: { 'X-API-Key': world.adminKey },
    });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer())).toEqual(signed);

    // Retries are not needed: delivered once, nothing left due.
    tick(h);
    await worker.drain();
    expect(receiver.at('/hooks')).toHaveLength(1);
  });

  test('a main file no signature touched stays an input_document', async () => {
    const { h, world, receiver, worker } = s;
    await s.subscribe('/hooks');
    // HDLD completes by approvals alone: guest image_signature, internal app_submit, role notification.
    const dossier = await createDossier(h, world.process, {
      documentId: 'HD-102',
      signers: [anh, { stepCode: 'DUYET', userId: world.hung.row.id }],
      files: [{ title: 'Hợp đồng.pdf' }, { title: 'Phụ lục.pdf', kind: 'ATTACHMENT' }],
    });
    await approveAs(h, dossier.id, (await accountOf(h, anh.identityNumber)).id);
    await approveAs(h, dossier.id, world.hung.row.id);
    await acknowledgeAs(h, dossier.id, world.nga.row.id);
    expect((await dossierRow(h, dossier.id)).status).toBe('COMPLETED');

    await worker.drain();
    const [request] = receivedOf(receiver, '/hooks', 'document.completed');
    const data = envelopeOf(request!).data as { documentId: string; files: { type: string }[] };
    expect(data.documentId).toBe('HD-102');
    expect(data.files.map((file) => file.type)).toEqual(['input_document', 'input_document']);
  });
});

describe('document.rejected', () => {
  test('carries the reason, who rejected, and signedAt null for the rejecting signer', async () => {
    const { h, world, receiver, worker } = s;
    const sub = await s.subscribe('/hooks');
    const created = await hdmbDossier(world, 'HD-200');
    await signAsAnh(world, created.id, created.fileIds[0]!);
    const binhAccount = await accountOf(h, binh.phone);
    await rejectAs(h, created.id, binhAccount.id, 'Sai đơn giá & số lượng');
    const dossier = await dossierRow(h, created.id);
    expect(dossier.status).toBe('REJECTED');

    await worker.drain();
    expect(receiver.at('/hooks')).toHaveLength(1);
    const [request] = receivedOf(receiver, '/hooks', 'document.rejected');
    expect(verifies(request!.raw, request!.headers['x-webhook-signature'], sub.secret)).toBe(true);
    const envelope = envelopeOf(request!);
    expect(envelope.type).toBe('document.rejected');
    expect(envelope.data).toMatchObject({
      documentId: 'HD-200',
      documentUuid: dossier.uuid,
      transactionId: dossier.transaction_id,
      status: 'REJECTED',
      completedAt: null,
      rejectedAt: dossier.rejected_at,
      reason: 'Sai đơn giá & số lượng',
      rejectedBy: { fullName: binh.fullName, email: null, phone: binh.phone, identityNumber: null },
      signedCount: 1,
      totalSigners: 2,
      signers: [
        anhSigned(await actedAt(created.id, 'KH')),
        {
          stepName: 'Đối tác ký',
          stepCode: 'DT',
          email: null,
          phone: binh.phone,
          status: 'REJECTED',
          signedAt: null,
        },
      ],
      metadata: { contractNo: 'C-77', tenantCode: 'ACME' },
    });
    // No finished signed file: every file is an input_document, even the signed main file.
    expect((envelope.data.files as { type: string }[]).map((file) => file.type)).toEqual([
      'input_document',
      'input_document',
    ]);
  });

  test('a guest rejecting first: identityNumber in rejectedBy, later signers PENDING', async () => {
    const { h, world, receiver, worker } = s;
    await s.subscribe('/hooks');
    const created = await hdmbDossier(world, 'HD-201');
    await rejectAs(h, created.id, (await accountOf(h, anh.identityNumber)).id, 'Không đồng ý');
    await worker.drain();
    const [request] = receivedOf(receiver, '/hooks', 'document.rejected');
    expect(envelopeOf(request!).data).toMatchObject({
      reason: 'Không đồng ý',
      rejectedBy: {
        fullName: anh.fullName,
        email: anh.email,
        phone: anh.phone,
        identityNumber: anh.identityNumber,
      },
      signedCount: 0,
      signers: [
        { stepCode: 'KH', status: 'REJECTED', signedAt: null },
        { stepCode: 'DT', status: 'PENDING', signedAt: null },
      ],
    });
  });
});

describe('EXPIRED', () => {
  test('an expired dossier produces no webhook', async () => {
    const { h, world, receiver, worker } = s;
    await s.subscribe('/all', [...subscribableEvents]);
    const created = await hdmbDossier(world, 'HD-300');
    await worker.drain();
    const before = receiver.at('/all').map((request) => request.headers['x-webhook-event']);
    expect(before).toEqual(['notification.task_assigned_external']); // KH invited at start
    const events = () => h.deps.db.selectFrom('webhook_events').select('type').execute();
    const eventsBefore = await events();

    h.clock.advance(day * 1000 + 1);
    expect(await expireOverdueTasks(h.deps)).toBe(1);
    expect((await dossierRow(h, created.id)).status).toBe('EXPIRED');
    await worker.drain();
    expect(await events()).toEqual(eventsBefore);
    expect(receiver.at('/all')).toHaveLength(1);
  });
});

describe('the outbox commits with the business write', () => {
  test('a completion whose transaction fails leaves no event behind', async () => {
    const { h, world, receiver, worker } = s;
    await s.subscribe('/hooks');
    const created = await hdmbDossier(world, 'HD-400');
    await signAsAnh(world, created.id, created.fileIds[0]!);
    await approveAs(h, created.id, (await accountOf(h, binh.phone)).id);
    await approveAs(h, created.id, world.hung.row.id);
    const types = () =>
      h.deps.db.selectFrom('webhook_events').select('type').orderBy('created_at').execute();
    const before = await types();
    // The completion writes document.completed, then queues the process_finished e-mails: the
    // e-mail insert fails, after the event row was written.
    const restore = await forceFailure(h.runtime.database, {
      table: 'notify_outbox',
      event: 'INSERT',
      message: 'disk full',
      timing: 'AFTER',
    });
    expect(await failureOf(acknowledgeAs(h, created.id, world.nga.row.id))).toBe('disk full');
    await restore();
    expect((await dossierRow(h, created.id)).status).toBe('IN_PROGRESS');
    expect(await types()).toEqual(before);
    await worker.drain();
    expect(receivedOf(receiver, '/hooks', 'document.completed')).toHaveLength(0);

    // The same action, once the failure is gone, completes and emits once.
    await acknowledgeAs(h, created.id, world.nga.row.id);
    await worker.drain();
    expect(receivedOf(receiver, '/hooks', 'document.completed')).toHaveLength(1);
  });
});
