import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { inTransaction } from '../../src/db/database';
import type { SignType, StepKind } from '../../src/db/schema';
import { guestAccountId } from '../../src/dossiers/guestAccounts';
import { insertFiles } from '../../src/dossiers/queries';
import type { StepRow } from '../../src/processes/queries';
import type { StoredFile } from '../../src/storage/fileStore';
import { approve } from '../../src/workflow/actions';
import { startWorkflow } from '../../src/workflow/lifecycle';
import type { TurnRow } from '../../src/workflow/taskContext';
import { classicFile } from '../pdf/hostilePdfs';
import type { Harness } from './harness';

/**
 * Builds processes and dossiers directly in SQLite, the way dossier creation (endpoint 1) writes
 * them, so workflow and task tests do not depend on the creation endpoint:
 *
 * - one turn per signer, status WAITING, task_id null, step_position = the step's position,
 *   turn_order by `order` then position in the array, signer_* fields as submitted;
 * - assignee_user_id: the external account for guest / phone_guest signers (found by username in
 *   the tenant, else created by dossier creation's own `guestAccountId`: username = identity
 *   number, else tax code, else e-mail / phone), the user for internal steps (the signer's user, else the step's default user),
 *   the signer's user on a role step when one is named (role distribution skipped), otherwise
 *   null with role_id = the step's role; a role step without signers gets one role turn;
 * - an internal step without signers gets one turn for its default user;
 * - required_count = number of turns; then startWorkflow unless `start: false`.
 */

export interface StepSpec {
  stepCode: string;
  name?: string;
  kind: StepKind;
  signType?: SignType;
  deadlineSeconds?: number | null;
  approveLabel?: string;
  rejectLabel?: string;
  roleId?: number | null;
  defaultUserId?: number | null;
}

export interface ProcessSpec {
  tenantId: number;
  organizationId: number;
  code: string;
  name?: string;
  documentClasses?: string[];
  steps: StepSpec[];
}

export interface FixtureProcess {
  id: number;
  code: string;
  tenantId: number;
  organizationId: number;
  steps: StepRow[];
}

export async function createProcess(h: Harness, spec: ProcessSpec): Promise<FixtureProcess> {
  const now = h.now();
  return inTransaction(h.deps.db, async (trx) => {
    const process = await trx
      .insertInto('processes')
      .values({
        tenant_id: spec.tenantId,
        organization_id: spec.organizationId,
        code: spec.code,
        name: spec.name ?? `Quy trình ${spec.code}`,
        document_classes: JSON.stringify(spec.documentClasses ?? ['HOP_DONG']),
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const steps: StepRow[] = [];
    for (const [index, step] of spec.steps.entries()) {
      steps.push(
        await trx
          .insertInto('process_steps')
          .values({
            process_id: process.id,
            position: index + 1,
            step_code: step.stepCode,
            name: step.name ?? `Bước ${index + 1}`,
            kind: step.kind,
            sign_type: step.signType ?? 'image_signature',
            deadline_seconds: step.deadlineSeconds ?? null,
            approve_label: step.approveLabel ?? 'Đồng ý',
            reject_label: step.rejectLabel ?? 'Từ chối',
            role_id: step.roleId ?? null,
            default_user_id: step.defaultUserId ?? null,
          })
          .returningAll()
          .executeTakeFirstOrThrow(),
      );
    }
    return {
      id: process.id,
      code: spec.code,
      tenantId: spec.tenantId,
      organizationId: spec.organizationId,
      steps,
    };
  });
}

export interface SignerSpec {
  stepCode: string;
  fullName?: string;
  email?: string;
  phone?: string;
  identityNumber?: string;
  taxCode?: string;
  /** An internal user: the `username` signer, or the person of an internal step. */
  userId?: number;
  order?: number;
}

export interface FileSpec {
  title: string;
  kind?: 'MAIN' | 'ATTACHMENT';
  ecmClassCode?: string | null;
  content?: Buffer;
}

export interface DossierSpec {
  /** null: a dossier created in the web app (no documentId). */
  documentId?: string | null;
  title?: string;
  ecmClassCode?: string | null;
  signers?: SignerSpec[];
  files?: FileSpec[];
  metadata?: Record<string, unknown>;
  createdByUserId?: number | null;
  /** Start the workflow (PENDING → PENDING_SIGN); default true. */
  start?: boolean;
}

export interface FixtureDossier {
  id: number;
  uuid: string;
  documentId: string | null;
  turns: TurnRow[];
  fileIds: number[];
}

/**
 * A real minimal PDF: one empty A4 page, a classic cross-reference table and `startxref`, so that
 * the signing engine's reader (the inspection of a dossier's fetched files) accepts it. `text`,
 * in a comment, keeps each file's bytes unique; a comment pads the file to at least `size` bytes.
 */
export function tinyPdf(text = 'Hop dong', size = 0): Buffer {
  const unpadded = pdfWithComment(text, '');
  if (unpadded.length >= size) return unpadded;
  // A comment line of `size - length` bytes: `%`, spaces, the line feed.
  return pdfWithComment(text, `%${' '.repeat(Math.max(0, size - unpadded.length - 2))}\n`);
}

function pdfWithComment(text: string, padding: string): Buffer {
  const comment = Buffer.from(`\n% ${text.replace(/[\r\n]/g, ' ')}\n${padding}`, 'utf8');
  return classicFile([
    Buffer.concat([Buffer.from('<</Type/Catalog/Pages 2 0 R>>', 'latin1'), comment]),
    '<</Type/Pages/Kids[3 0 R]/Count 1>>',
    '<</Type/Page/Parent 2 0 R/MediaBox[0 0 595 842]/Resources<<>>>>',
  ]);
}

let documentCounter = 0;

function guestUsername(kind: StepKind, signer: SignerSpec): string {
  const username =
    signer.identityNumber ??
    signer.taxCode ??
    (kind === 'phone_guest' ? signer.phone : signer.email);
  if (!username) throw new Error(`guest signer of ${signer.stepCode} has no identity`);
  return username;
}

export async function createDossier(
  h: Harness,
  process: FixtureProcess,
  spec: DossierSpec = {},
): Promise<FixtureDossier> {
  const now = h.now();
  documentCounter += 1;
  const documentId = spec.documentId === undefined ? `DOC-${documentCounter}` : spec.documentId;
  const stored: { file: FileSpec; blob: StoredFile }[] = [];
  for (const file of spec.files ?? [{ title: 'Hợp đồng' }]) {
    stored.push({ file, blob: await h.deps.files.put(Readable.from(file.content ?? tinyPdf())) });
  }
  const dossier = await inTransaction(h.deps.db, async (trx) => {
    const stepByCode = new Map(process.steps.map((step) => [step.step_code, step]));
    const signers = (spec.signers ?? []).map((signer, index) => ({ signer, index }));
    const turnRows = [];
    for (const step of process.steps) {
      const mine = signers
        .filter(({ signer }) => signer.stepCode === step.step_code)
        .sort(
          (a, b) =>
            (a.signer.order ?? a.index + 1) - (b.signer.order ?? b.index + 1) || a.index - b.index,
        );
      // A step nobody was sent for: a role step gets one role turn, an internal step its default user.
      if (mine.length === 0 && (step.kind === 'role' || step.default_user_id !== null)) {
        mine.push({ signer: { stepCode: step.step_code }, index: -1 });
      }
      for (const [order, { signer }] of mine.entries()) {
        let assignee: number | null = signer.userId ?? null;
        if (step.kind === 'guest' || step.kind === 'phone_guest') {
          assignee = await guestAccountId(
            trx,
            process.tenantId,
            {
              username: guestUsername(step.kind, signer),
              usernameField: 'signers',
              name: signer.fullName ?? null,
              email: signer.email ?? null,
              phone: signer.phone ?? null,
              identityNumber: signer.identityNumber ?? null,
              taxCode: signer.taxCode ?? null,
            },
            now,
          );
        } else if (step.kind === 'internal') {
          assignee ??= step.default_user_id;
          if (assignee === null) throw new Error(`internal step ${step.step_code} has no user`);
        }
        turnRows.push({
          step_id: step.id,
          step_position: step.position,
          turn_order: order + 1,
          task_id: null,
          status: 'WAITING' as const,
          signer_full_name: signer.fullName ?? null,
          signer_email: signer.email ?? null,
          signer_phone: signer.phone ?? null,
          signer_identity_number: signer.identityNumber ?? null,
          signer_tax_code: signer.taxCode ?? null,
          assignee_user_id: assignee,
          role_id: step.kind === 'role' ? step.role_id : null,
          acted_by_user_id: null,
          acted_at: null,
          comment: null,
        });
      }
    }
    for (const { signer } of signers) {
      if (!stepByCode.has(signer.stepCode)) throw new Error(`no step ${signer.stepCode}`);
    }
    const tenant = await trx
      .selectFrom('tenants')
      .select('code')
      .where('id', '=', process.tenantId)
      .executeTakeFirstOrThrow();
    const row = await trx
      .insertInto('dossiers')
      .values({
        uuid: crypto.randomUUID(),
        tenant_id: process.tenantId,
        organization_id: process.organizationId,
        document_id: documentId,
        title: spec.title ?? documentId ?? 'Hồ sơ',
        process_id: process.id,
        ecm_class_code: spec.ecmClassCode ?? null,
        status: 'PENDING',
        transaction_id: null,
        metadata: JSON.stringify({ ...(spec.metadata ?? {}), tenantCode: tenant.code }),
        created_by_user_id: spec.createdByUserId ?? null,
        required_count: turnRows.length,
        created_at: now,
        updated_at: now,
        started_at: null,
        completed_at: null,
        rejected_at: null,
        expired_at: null,
      })
      .returning(['id', 'uuid'])
      .executeTakeFirstOrThrow();
    await insertFiles(
      trx,
      row.id,
      process.organizationId,
      stored.map(({ file, blob }, index) => ({
        kind: file.kind ?? 'MAIN',
        position: stored
          .slice(0, index + 1)
          .filter((other) => (other.file.kind ?? 'MAIN') === (file.kind ?? 'MAIN')).length,
        title: file.title,
        ecmClassCode: file.ecmClassCode === undefined ? 'HOP_DONG' : file.ecmClassCode,
        mimeType: 'application/pdf',
        stored: blob,
      })),
      now,
    );
    const fileIds = (
      await trx
        .selectFrom('dossier_files')
        .select('id')
        .where('dossier_id', '=', row.id)
        .orderBy('id')
        .execute()
    ).map((file) => file.id);
    if (turnRows.length > 0) {
      await trx
        .insertInto('turns')
        .values(turnRows.map((turn) => ({ ...turn, dossier_id: row.id })))
        .execute();
    }
    if (spec.start !== false) await startWorkflow(trx, h.deps, row.id);
    return { ...row, fileIds };
  });
  for (const { blob } of stored) h.deps.files.keep(blob);
  return {
    id: dossier.id,
    uuid: dossier.uuid,
    documentId,
    fileIds: dossier.fileIds,
    turns: await turnsOf(h, dossier.id),
  };
}

/** The turns of a dossier in step and turn order, as stored now. */
export function turnsOf(h: Harness, dossierId: number): Promise<TurnRow[]> {
  return h.deps.db
    .selectFrom('turns')
    .selectAll()
    .where('dossier_id', '=', dossierId)
    .orderBy('step_position')
    .orderBy('turn_order')
    .execute();
}

/** The dossier row as stored now. */
export function dossierRow(h: Harness, dossierId: number) {
  return h.deps.db
    .selectFrom('dossiers')
    .selectAll()
    .where('id', '=', dossierId)
    .executeTakeFirstOrThrow();
}

/** Tasks of a dossier in the order they were opened. */
export function tasksOf(h: Harness, dossierId: number) {
  return h.deps.db
    .selectFrom('tasks')
    .selectAll()
    .where('dossier_id', '=', dossierId)
    .orderBy('id')
    .execute();
}

/** The task waiting on a dossier (the open step), or undefined. */
export async function openTask(h: Harness, dossierId: number) {
  return h.deps.db
    .selectFrom('tasks')
    .selectAll()
    .where('dossier_id', '=', dossierId)
    .where('status', '=', 1)
    .executeTakeFirst();
}

/** History rows of a dossier in time order. */
export function historyOf(h: Harness, dossierId: number) {
  return h.deps.db
    .selectFrom('history')
    .selectAll()
    .where('dossier_id', '=', dossierId)
    .orderBy('action_at')
    .orderBy('id')
    .execute();
}

/** Approves the dossier's open task as `actorUserId`: the walks of the tests. */
export async function approveOpenTask(
  h: Harness,
  dossierId: number,
  actorUserId: number,
  comment?: string,
) {
  const task = await openTask(h, dossierId);
  if (!task) throw new Error(`dossier ${dossierId} has no open task`);
  return approve(h.deps, { taskCode: task.code, actorUserId, comment });
}
