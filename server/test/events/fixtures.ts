import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import {
  type ReceivedWebhook,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../../../test/support/webhookReceiver';
import { inTransaction } from '../../src/db/database';
import { startWebhookWorker, type WebhookWorker } from '../../src/webhooks/worker';
import { acknowledge, approve, completeSignedTurn, reject } from '../../src/workflow/actions';
import { createDossier, createProcess, type FixtureProcess, openTask } from '../support/dossiers';
import type { Harness } from '../support/harness';
import { subscribe, webhookHarness } from '../webhooks/fixtures';
import { accountOf, buildWorkflowWorld, day, type WorkflowWorld } from '../workflow/world';

/**
 * The world of the event tests: the workflow world (ACME with hung, lan, minh and nga, the role
 * "Kế toán trưởng" held by minh and nga) and a four-step process that has every kind of step:
 *
 * ```
 * HDMB "Hợp đồng mua bán":
 *   1 KH     guest        digital_signature  deadline 1 day   (the outside signer Ánh, by e-mail)
 *   2 DT     phone_guest  image_signature                     (the outside signer Bình, by phone)
 *   3 DUYET  internal     app_submit                          (hung)
 *   4 KTT    role         notification                        (Kế toán trưởng: minh or nga)
 * ```
 *
 * Only KH and DT are outside signers: `totalSigners` 2, `requiredCount` 4.
 */
export interface EventWorld extends WorkflowWorld {
  h: Harness;
  hdmb: FixtureProcess;
}

export async function buildEventWorld(h: Harness): Promise<EventWorld> {
  const world = await buildWorkflowWorld(h);
  const hdmb = await createProcess(h, {
    tenantId: world.acme.id,
    organizationId: world.rootId,
    code: 'HDMB',
    name: 'Hợp đồng mua bán',
    steps: [
      {
        stepCode: 'KH',
        name: 'Khách hàng ký',
        kind: 'guest',
        signType: 'digital_signature',
        deadlineSeconds: day,
        approveLabel: 'Ký',
      },
      { stepCode: 'DT', name: 'Đối tác ký', kind: 'phone_guest', signType: 'image_signature' },
      { stepCode: 'DUYET', name: 'Phê duyệt nội bộ', kind: 'internal', signType: 'app_submit' },
      {
        stepCode: 'KTT',
        name: 'Kế toán trưởng xác nhận',
        kind: 'role',
        signType: 'notification',
        roleId: world.ktRoleId,
      },
    ],
  });
  return { ...world, h, hdmb };
}

export const anh = {
  stepCode: 'KH',
  fullName: 'Nguyễn Văn Ánh',
  email: 'anh.nguyen@khachhang.vn',
  phone: '0912345678',
  identityNumber: '001203004005',
};

export const binh = { stepCode: 'DT', fullName: 'Trần Thị Bình', phone: '0987654321' };

/** A dossier of HDMB created by the admin: a main file, an attachment, the caller's metadata. */
export async function hdmbDossier(world: EventWorld, documentId: string) {
  return createDossier(world.h, world.hdmb, {
    documentId,
    title: `Hợp đồng ${documentId} & phụ lục`,
    signers: [anh, binh, { stepCode: 'DUYET', userId: world.hung.row.id }],
    files: [
      { title: 'Hợp đồng mua bán.pdf', ecmClassCode: 'HDMB' },
      { title: 'CCCD.pdf', kind: 'ATTACHMENT', ecmClassCode: null },
    ],
    metadata: { contractNo: 'C-77', tenantCode: 'spoofed' },
    createdByUserId: world.adminId,
  });
}

/** One minute later on the manual clock, so every action has its own time. */
export function tick(h: Harness): string {
  h.clock.advance(60_000);
  return h.now();
}

export async function openTaskCode(h: Harness, dossierId: number): Promise<string> {
  const task = await openTask(h, dossierId);
  if (!task) throw new Error(`dossier ${dossierId} has no open task`);
  return task.code;
}

/** Signs KH as Ánh with a new version of the main file, stored in the file store. */
export async function signAsAnh(world: EventWorld, dossierId: number, mainFileId: number) {
  const { h } = world;
  const signed = Buffer.from(`%PDF-1.4\n% signed by Ánh ${crypto.randomUUID()}\n%%EOF\n`);
  const stored = await h.deps.files.put(Readable.from(signed));
  tick(h);
  const taskCode = await openTaskCode(h, dossierId);
  const actorUserId = (await accountOf(h, anh.identityNumber)).id;
  await inTransaction(h.deps.db, (trx) =>
    completeSignedTurn(trx, h.deps, {
      taskCode,
      actorUserId,
      newFileVersions: [{ fileId: mainFileId, sha256: stored.sha256, size: stored.size }],
    }),
  );
  h.deps.files.keep(stored);
  return signed;
}

export async function approveAs(h: Harness, dossierId: number, actorUserId: number) {
  tick(h);
  return approve(h.deps, { taskCode: await openTaskCode(h, dossierId), actorUserId });
}

export async function acknowledgeAs(h: Harness, dossierId: number, actorUserId: number) {
  tick(h);
  return acknowledge(h.deps, { taskCode: await openTaskCode(h, dossierId), actorUserId });
}

export async function rejectAs(h: Harness, dossierId: number, actorUserId: number, reason: string) {
  tick(h);
  return reject(h.deps, { taskCode: await openTaskCode(h, dossierId), actorUserId, reason });
}

/** Walks a fresh HDMB dossier to COMPLETED; returns the signed bytes of its main file. */
export async function completeHdmb(world: EventWorld, dossier: { id: number; fileIds: number[] }) {
  const { h } = world;
  const signed = await signAsAnh(world, dossier.id, dossier.fileIds[0]!);
  await approveAs(h, dossier.id, (await accountOf(h, binh.phone)).id);
  await approveAs(h, dossier.id, world.hung.row.id);
  await acknowledgeAs(h, dossier.id, world.minh.row.id);
  return signed;
}

/** The parsed body of a received webhook. */
export function envelopeOf(request: ReceivedWebhook) {
  return JSON.parse(request.raw.toString('utf8')) as {
    id: string;
    type: string;
    createdAt: string;
    data: Record<string, unknown> & { recipients?: Record<string, unknown>[] };
  };
}

/** Requests of one event type that reached `path`. */
export function receivedOf(receiver: WebhookReceiver, path: string, type: string) {
  return receiver.at(path).filter((request) => request.headers['x-webhook-event'] === type);
}

/**
 * A harness whose outbound requests may reach the local receiver, the event world, a webhook
 * worker driven by `drain()`, and a fresh receiver for each test (closed by `close`).
 */
export interface EventSetup {
  h: Harness;
  world: EventWorld;
  receiver: WebhookReceiver;
  worker: WebhookWorker;
  subscribe(path: string, events?: string[]): Promise<{ id: string; secret: string }>;
  close(): Promise<void>;
}

export async function eventSetup(env: Record<string, string> = {}): Promise<EventSetup> {
  const h = webhookHarness(env);
  const world = await buildEventWorld(h);
  const receiver = await startWebhookReceiver();
  const worker = startWebhookWorker(h.deps, { poll: false, timeoutMs: 5_000 });
  return {
    h,
    world,
    receiver,
    worker,
    subscribe: (path, events) => subscribe(h, 'ACME', receiver.url(path), events),
    close: async () => {
      await worker.stop();
      await receiver.close();
      await h.close();
    },
  };
}

/**
 * The message an action fails with. better-sqlite3 makes its errors with the class of the first
 * test file of the jest worker that loaded it (another realm for later files), which
 * `rejects.toThrow` does not recognise as an error.
 */
export async function failureOf(action: Promise<unknown>): Promise<string> {
  try {
    await action;
  } catch (error) {
    return String((error as { message?: unknown }).message);
  }
  throw new Error('expected the action to fail');
}
