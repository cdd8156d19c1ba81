import { messagesOf } from '@esign/shared/messages';
import { appendAuditEvent } from '../audit/chain';
import { dossierTrail } from '../audit/subject';
import type { SigningMethod } from '../db/schema';
import { DomainError } from '../errors/domainError';
import { dossierFiles } from '../files/queries';
import { contractMail, queueMail } from '../notify';
import type { Clock } from '../platform/clock';
import {
  type Acting,
  type ActionOutcome,
  auditActorOf,
  completeSignedTurn,
  completesDossier,
  performable,
  rejectInTransaction,
} from '../workflow/actions';
import { dossierById } from '../workflow/queries/dossiers';
import { actorSnapshot, loadTaskContext, signerNumbers } from '../workflow/taskContext';
import { defaultSignatureBox } from './rules';
import type { SigningSubject, TaskOutcome } from './subject';

/**
 * The methods each step signs with: a digital_signature step needs the signer's own
 * certificate (USB token or cloud key); an image_signature step draws the picture under the
 * service seal.
 */
export const methodsOfStep: Record<string, readonly SigningMethod[]> = {
  digital_signature: ['usb_token', 'cloud_hsm'],
  image_signature: ['image_signature'],
};

export const taskSessionErrors = {
  notSigned: (signType: string) =>
    new DomainError(
      'SIGNATURE_NOT_EXPECTED',
      `Only digital_signature and image_signature steps are signed (this step is ${signType})`,
    ),
  methodNotAllowed: (signType: string, method: SigningMethod) =>
    new DomainError(
      'SIGNING_METHOD_NOT_ALLOWED',
      `A ${signType} step is not signed with ${method}; use ${methodsOfStep[signType]!.join(' or ')}`,
      { field: 'signingMethod' },
    ),
  mainFiles: (count: number) =>
    new DomainError(
      'MAIN_FILE_NOT_SINGLE',
      `A signing session signs one MAIN file; this dossier has ${count}`,
    ),
};

function outcomeOf(outcome: ActionOutcome, documentId: string | null): TaskOutcome {
  return {
    taskCode: outcome.taskCode,
    taskStatus: outcome.taskStatus,
    documentId,
    dossierStatus: outcome.dossierStatus,
    signedCount: outcome.signedCount,
    requiredCount: outcome.requiredCount,
    nextTaskCode: outcome.nextTaskCode,
  };
}

/**
 * The turn `userId` may perform now on task `taskCode`, as a subject: the dossier's MAIN file
 * (exactly one), the signer as the turn names them, the workflow's refusals. A signature is
 * `completeSignedTurn` with the signed file as the file's next version; a refusal is the
 * workflow's reject (which records `rejected`). Events go to the dossier's audit trail, each
 * naming the task.
 */
export async function taskSubject(
  deps: { db: Parameters<typeof performable>[0]; clock: Clock },
  taskCode: string,
  userId: number,
  method: SigningMethod,
): Promise<SigningSubject> {
  const acting = await performable(deps.db, deps.clock, { taskCode, actorUserId: userId });
  const signType = acting.context.step.sign_type;
  const allowed = methodsOfStep[signType];
  if (!allowed) throw taskSessionErrors.notSigned(signType);
  if (!allowed.includes(method)) throw taskSessionErrors.methodNotAllowed(signType, method);
  const dossier = await dossierById(deps.db, acting.context.dossier.id);
  const mains = (await dossierFiles(deps.db, dossier.id)).filter((file) => file.kind === 'MAIN');
  if (mains.length !== 1) throw taskSessionErrors.mainFiles(mains.length);
  return subjectOf(deps, acting, mains[0]!.id, dossier);
}

function subjectOf(
  deps: { clock: Clock },
  acting: Acting,
  fileId: number,
  dossier: { id: number; uuid: string; document_id: string | null; title: string },
): SigningSubject {
  const { context, actor: user, turn } = acting;
  const who = actorSnapshot(context.step.kind, user, turn);
  const name = who.actor_name ?? user.username;
  const signerActor = auditActorOf(acting);
  const taskCode = context.task.code;
  return {
    kind: 'task',
    tenantId: context.task.tenantId,
    signer: {
      name,
      email: who.actor_email ?? null,
      phone: who.actor_phone ?? null,
      ...signerNumbers(context.step.kind, user, turn),
    },
    signerActor,
    summary: { id: taskCode, title: dossier.title },
    sessionColumns: {
      contract_id: null,
      signer_id: null,
      task_id: context.task.id,
      user_id: user.id,
      file_id: fileId,
    },
    assertSignable: async (db) => {
      await performable(db, deps.clock, { taskCode, actorUserId: user.id });
    },
    newestFile: async (db) => {
      const file = (await dossierFiles(db, dossier.id)).find((f) => f.id === fileId)!;
      return { sha256: file.sha256, version: file.version };
    },
    // One default box per signature so far: successive signers never overlap.
    signatureBox: (lastPage, version) => defaultSignatureBox(version - 1, lastPage),
    reason: (method, locale) => messagesOf(locale).pdf.reason.dossier[method],
    audit: async (trx, event) => {
      await appendAuditEvent(trx, deps.clock, dossierTrail(dossier.id), {
        ...event,
        details: { taskCode, ...event.details },
      });
    },
    mailOtp: async (trx, mailDeps, otp) => {
      if (!who.actor_email) return;
      const mail = contractMail(
        'otp',
        {
          recipientName: name,
          contractId: dossier.document_id ?? dossier.uuid,
          contractTitle: dossier.title,
          senderName: null,
          link: null,
          deadline: null,
          reason: null,
          otp,
        },
        { locale: mailDeps.config.notify.locale, serviceName: mailDeps.config.serviceName },
      );
      await queueMail(trx, mailDeps, {
        tenantId: context.task.tenantId,
        kind: 'dossier_otp',
        to: who.actor_email,
        toName: name,
        ...mail,
      });
    },
    // The dossier's archive is made when it completes (workflow/archive.ts): by this signature
    // when no turn or step follows it, else by the action that ends the workflow.
    isLastSignature: async (db) =>
      completesDossier(db, await performable(db, deps.clock, { taskCode, actorUserId: user.id })),
    commitSignature: async (trx, commitDeps, { signed }) => {
      const { archived } = signed;
      const outcome = await completeSignedTurn(trx, commitDeps, {
        taskCode,
        actorUserId: user.id,
        newFileVersions: [{ fileId, sha256: signed.sha256, size: signed.size }],
        archives: archived ? [{ fileId, sourceSha256: signed.sha256, ...archived }] : [],
      });
      return { task: outcomeOf(outcome, dossier.document_id) };
    },
    reject: async (trx, rejectDeps, reason, { origin }) => {
      const outcome = await rejectInTransaction(trx, rejectDeps, {
        taskCode,
        actorUserId: user.id,
        reason,
        origin,
      });
      return { task: outcomeOf(outcome, dossier.document_id) };
    },
  };
}

/** The subject of an existing task session (its method was checked at initiate). */
export async function taskSubjectOfSession(
  deps: { db: Parameters<typeof performable>[0]; clock: Clock },
  session: { task_id: number; user_id: number; file_id: number },
): Promise<SigningSubject> {
  const context = (await loadTaskContext(deps.db, { id: session.task_id }))!;
  const acting = await performable(deps.db, deps.clock, {
    taskCode: context.task.code,
    actorUserId: session.user_id,
  });
  const dossier = await dossierById(deps.db, acting.context.dossier.id);
  return subjectOf(deps, acting, session.file_id, dossier);
}
