import { appendAuditEvent } from '../audit/chain';
import { type AuditActor, type AuditOrigin, dossierTrail } from '../audit/subject';
import { findUserById, type UserRow, userStatus } from '../auth/queries';
import { type Db, inTransaction } from '../db/database';
import type { DossierStatus, HistoryAction, SignType } from '../db/schema';
import { DomainError } from '../errors/domainError';
import type { Clock } from '../platform/clock';
import {
  type ArchiveDeps,
  archiveSignedFiles,
  type FileArchive,
  noArchives,
  type PendingArchives,
  recordArchives,
  settleArchives,
} from './archive';
import { expireTask } from './deadlines';
import { type EventDeps, turnActivated } from './events';
import { dossierEnded, endedStatuses, openNextStep } from './lifecycle';
import {
  countSignature,
  dossierProgress,
  insertFileVersion,
  insertHistory,
  mainFileOfDossier,
  newestVersionNumber,
} from './queries/dossiers';
import { newestTaskCode, taskStatus, updateTask } from './queries/tasks';
import { cancelRemainingTurns, nextStepWithTurns, updateTurn } from './queries/turns';
import {
  actorSnapshot,
  loadTaskContext,
  mayPerform,
  participantAt,
  type TaskContext,
  type TurnRow,
  takesPart,
} from './taskContext';

/**
 * The task actions: the one module through which a turn is performed. The web app and the
 * signing pipeline call it; this issue drives it from tests and the operator CLI.
 *
 * - `approve`: image_signature and app_submit steps; refused on digital_signature steps, which
 *   complete only through the signing pipeline with `completeSignedTurn`.
 * - `acknowledge`: notification steps.
 * - `reject`: any step; a reason is required; the dossier ends REJECTED.
 * - `completeSignedTurn`: the boundary of the digital-signature pipeline, called inside the
 *   pipeline's own transaction once it has stored the signed PDF: it adds the new file versions
 *   and advances the workflow exactly as `approve` does.
 *
 * Only the ACTIVE turn of a waiting task can be performed, by its assignee, by any holder of its
 * role while nobody has taken it (the first who acts takes it), or by a delegate of its assignee
 * during a delegation in force (the history names the delegate). A signed turn activates the next
 * turn of the task; the last one approves the task and opens the next step; after the last step
 * the dossier is COMPLETED (signedCount equals requiredCount).
 */

export type TaskStatusName = 'PENDING' | 'APPROVED' | 'REJECTED' | 'EXPIRED';

/** The spec's task status values: 1 waiting, 2 approved, 3 rejected, 4 expired. */
export const taskStatusNames: Record<number, TaskStatusName> = {
  1: 'PENDING',
  2: 'APPROVED',
  3: 'REJECTED',
  4: 'EXPIRED',
};

export interface TaskActionInput {
  taskCode: string;
  actorUserId: number;
  comment?: string | undefined;
}

export interface RejectInput {
  taskCode: string;
  actorUserId: number;
  reason: string;
  /** Where the request came from, for the dossier's audit trail (none from the CLI). */
  origin?: AuditOrigin | null;
}

export interface NewFileVersion {
  /** `dossier_files.id` of a MAIN file of the task's dossier. */
  fileId: number;
  sha256: string;
  size: number;
}

export interface SignedTurnInput extends TaskActionInput {
  newFileVersions: NewFileVersion[];
  /**
   * When this turn completes the dossier (completesDossier): the archive of each signed MAIN
   * file, made from the version this turn adds (workflow/archive.ts).
   */
  archives?: FileArchive[];
}

/** Where the dossier stands after an action. */
export interface ActionOutcome {
  taskCode: string;
  taskStatus: TaskStatusName;
  dossierId: number;
  dossierStatus: DossierStatus;
  signedCount: number;
  requiredCount: number;
  /** The task opened for the next step by this action, if any. */
  nextTaskCode: string | null;
}

/** Longest comment or reason kept (characters). */
export const commentMaxLength = 2000;

/** The clock and the database, plus what the events of a step need (workflow/events.ts). */
type ActionDeps = EventDeps;

function cleanText(value: string | undefined, field: string, required: boolean): string | null {
  const text = value?.trim() ?? '';
  if (required && text === '') {
    throw new DomainError('VALIDATION_ERROR', `${field} is required`, { field });
  }
  if (text.length > commentMaxLength) {
    throw new DomainError('VALIDATION_ERROR', `${field} is longer than ${commentMaxLength}`, {
      field,
    });
  }
  return text === '' ? null : text;
}

function taskNotFound(taskCode: string): DomainError {
  return new DomainError('TASK_NOT_FOUND', `No task ${taskCode}`, { field: 'taskCode' });
}

/** The active turn of a task, its context, and the user about to perform it. */
export interface Acting {
  context: TaskContext;
  turn: TurnRow;
  actor: UserRow;
}

/** The user performing a turn as the dossier's audit trail names them (as the turn does). */
export function auditActorOf({ context, actor, turn }: Acting): AuditActor {
  const who = actorSnapshot(context.step.kind, actor, turn);
  const name = who.actor_name ?? actor.username;
  return {
    kind: 'user',
    userId: actor.id,
    name: who.actor_email ? `${name} <${who.actor_email}>` : name,
  };
}

/**
 * The active turn `actorUserId` may perform now, or 'overdue' when the task's deadline has
 * passed (the caller expires it). Someone who takes no part in the task gets 404 (its
 * existence is not revealed); a participant whose turn it is not gets 409 NOT_YOUR_TURN.
 */
async function actingTurn(
  trx: Db,
  clock: Clock,
  taskCode: string,
  actorUserId: number,
): Promise<Acting | 'overdue'> {
  const context = await loadTaskContext(trx, { code: taskCode });
  const actor = await findUserById(trx, actorUserId);
  if (!context || !actor || actor.tenant_id !== context.task.tenantId) throw taskNotFound(taskCode);
  const now = clock.now().toISOString();
  const participant = await participantAt(trx, actor.id, now);
  if (!takesPart(participant, context.turns)) throw taskNotFound(taskCode);
  if (actor.status === userStatus.locked) {
    throw new DomainError('ACCOUNT_LOCKED', `${actor.username} is locked`);
  }
  const dossierStatus = context.dossier.status;
  if (endedStatuses.includes(dossierStatus)) {
    throw new DomainError(
      'DOSSIER_ENDED',
      `The dossier is ${dossierStatus}; its lifecycle has ended`,
    );
  }
  if (context.task.status !== 1) {
    throw new DomainError(
      'TASK_ALREADY_HANDLED',
      `Task ${taskCode} is ${taskStatusNames[context.task.status]}`,
    );
  }
  if (context.task.expireAt !== null && context.task.expireAt <= now) return 'overdue';
  const turn = context.turns.find((candidate) => candidate.status === 'ACTIVE');
  if (!turn || !mayPerform(participant, turn)) {
    throw new DomainError('NOT_YOUR_TURN', `Task ${taskCode} waits for another signer`);
  }
  return { context, turn, actor };
}

function taskExpired(taskCode: string): DomainError {
  return new DomainError('TASK_EXPIRED', `The deadline of task ${taskCode} has passed`);
}

/** 422 unless the step's sign type is one of `allowed`. */
function requireSignType(acting: Acting, allowed: SignType[], code: string, message: string) {
  if (!allowed.includes(acting.context.step.sign_type)) {
    throw new DomainError(
      code,
      `${message} (step ${acting.context.step.step_code} is ${acting.context.step.sign_type})`,
    );
  }
}

async function recordHistory(
  trx: Db,
  acting: Acting,
  action: HistoryAction,
  label: string,
  at: string,
  comment: string | null,
): Promise<void> {
  const { context, turn, actor } = acting;
  await insertHistory(trx, {
    tenant_id: context.task.tenantId,
    dossier_id: context.dossier.id,
    task_id: context.task.id,
    turn_id: turn.id,
    action,
    action_label: label,
    action_at: at,
    comment,
    ...actorSnapshot(context.step.kind, actor, turn),
  });
}

/** Marks the active turn performed: a role turn is taken by whoever acts first. */
async function closeTurn(
  trx: Db,
  acting: Acting,
  status: 'SIGNED' | 'REJECTED',
  at: string,
  comment: string | null,
) {
  await updateTurn(trx, acting.turn.id, {
    status,
    assignee_user_id: acting.turn.assignee_user_id ?? acting.actor.id,
    acted_by_user_id: acting.actor.id,
    acted_at: at,
    comment,
  });
}

async function outcomeOf(trx: Db, acting: Acting, opened: boolean): Promise<ActionOutcome> {
  const dossier = await dossierProgress(trx, acting.context.dossier.id);
  const task = await taskStatus(trx, acting.context.task.id);
  const next = opened ? await newestTaskCode(trx, acting.context.dossier.id) : undefined;
  return {
    taskCode: acting.context.task.code,
    taskStatus: taskStatusNames[task.status]!,
    dossierId: acting.context.dossier.id,
    dossierStatus: dossier.status,
    signedCount: dossier.signed_count,
    requiredCount: dossier.required_count,
    nextTaskCode: next?.code ?? null,
  };
}

/**
 * A signed (or acknowledged) turn: NEXT history with the step's approve label, signedCount + 1,
 * PENDING_SIGN → IN_PROGRESS on the first signature, then the next turn of the task, or the task
 * approved and the next step opened, or the dossier COMPLETED when no step is left.
 */
async function signTurn(
  trx: Db,
  deps: ActionDeps,
  acting: Acting,
  comment: string | null,
  archives: FileArchive[],
): Promise<ActionOutcome> {
  const { context, turn } = acting;
  const now = deps.clock.now().toISOString();
  await closeTurn(trx, acting, 'SIGNED', now, comment);
  await recordHistory(trx, acting, 'NEXT', context.step.approve_label, now, comment);
  await countSignature(trx, context.dossier.id, now);
  const nextTurn = context.turns.find(
    (candidate) => candidate.turn_order > turn.turn_order && candidate.status === 'WAITING',
  );
  if (nextTurn) {
    await updateTurn(trx, nextTurn.id, { status: 'ACTIVE' });
    await turnActivated(trx, deps, nextTurn.id);
    return outcomeOf(trx, acting, false);
  }
  await updateTask(trx, context.task.id, { status: 2, action_at: now, comment });
  const opened = await openNextStep(trx, deps, context.dossier.id, context.step.position);
  if (!opened) {
    const dossierId = context.dossier.id;
    const archived = await recordArchives(trx, dossierId, context.task.tenantId, archives, now);
    await dossierEnded(trx, deps, dossierId, 'COMPLETED', now, archived);
  }
  return outcomeOf(trx, acting, opened);
}

/**
 * Whether performing `acting`'s turn completes the dossier: no turn of its task waits after it
 * and no later step has turns (as signTurn decides). Asked before the action's transaction so
 * that the dossier's archive is made first (workflow/archive.ts).
 */
export async function completesDossier(db: Db, acting: Acting): Promise<boolean> {
  const { context, turn } = acting;
  const laterTurn = context.turns.some(
    (candidate) => candidate.turn_order > turn.turn_order && candidate.status === 'WAITING',
  );
  if (laterTurn) return false;
  return !(await nextStepWithTurns(db, context.dossier.id, context.step.position));
}

/**
 * A signTurn action (approve, acknowledge) of a step of `signTypes`: when it completes the
 * dossier, the signed files' archives are made before its transaction and kept only if it
 * commits (a TSA failure refuses the action, nothing written).
 */
async function performSignTurn(
  deps: ArchiveDeps,
  input: { taskCode: string; actorUserId: number },
  signTypes: SignType[],
  work: (trx: Db, acting: Acting, archives: FileArchive[]) => Promise<ActionOutcome>,
): Promise<ActionOutcome> {
  const acting = await actingTurn(deps.db, deps.clock, input.taskCode, input.actorUserId);
  const archiving =
    acting !== 'overdue' &&
    signTypes.includes(acting.context.step.sign_type) &&
    (await completesDossier(deps.db, acting));
  const pending: PendingArchives = archiving
    ? await archiveSignedFiles(deps, acting.context.dossier.id, acting.context.task.tenantId)
    : noArchives;
  try {
    const outcome = await perform(deps, input, (trx, acting) =>
      work(trx, acting, pending.archives),
    );
    await settleArchives(deps, pending, true);
    return outcome;
  } catch (error) {
    await settleArchives(deps, pending, false);
    throw error;
  }
}

/**
 * Runs one action in its own transaction. A task found overdue is expired in that transaction
 * (the scheduler may not have passed yet) and the action then refused with 409 TASK_EXPIRED.
 */
async function perform(
  deps: ActionDeps,
  input: { taskCode: string; actorUserId: number },
  work: (trx: Db, acting: Acting) => Promise<ActionOutcome>,
): Promise<ActionOutcome> {
  const result = await inTransaction(deps.db, async (trx) => {
    const acting = await actingTurn(trx, deps.clock, input.taskCode, input.actorUserId);
    if (acting !== 'overdue') return work(trx, acting);
    const context = await loadTaskContext(trx, { code: input.taskCode });
    await expireTask(trx, deps, context!.task.id);
    return 'overdue' as const;
  });
  if (result === 'overdue') throw taskExpired(input.taskCode);
  return result;
}

/** Approves the active turn of an image_signature or app_submit step. */
export async function approve(deps: ArchiveDeps, input: TaskActionInput): Promise<ActionOutcome> {
  const comment = cleanText(input.comment, 'comment', false);
  const signTypes: SignType[] = ['image_signature', 'app_submit'];
  return performSignTurn(deps, input, signTypes, (trx, acting, archives) => {
    requireSignType(
      acting,
      signTypes,
      acting.context.step.sign_type === 'digital_signature'
        ? 'SIGNATURE_REQUIRED'
        : 'ACKNOWLEDGE_REQUIRED',
      acting.context.step.sign_type === 'digital_signature'
        ? 'A digital_signature step completes only with a digital signature'
        : 'A notification step is acknowledged, not approved',
    );
    return signTurn(trx, deps, acting, comment, archives);
  });
}

/** Acknowledges the active turn of a notification step (it counts as signed). */
export async function acknowledge(
  deps: ArchiveDeps,
  input: TaskActionInput,
): Promise<ActionOutcome> {
  const comment = cleanText(input.comment, 'comment', false);
  return performSignTurn(deps, input, ['notification'], (trx, acting, archives) => {
    requireSignType(
      acting,
      ['notification'],
      'NOT_A_NOTIFICATION_STEP',
      'Only notification steps are acknowledged',
    );
    return signTurn(trx, deps, acting, comment, archives);
  });
}

/**
 * The turn REJECTED, REJECT history with the step's reject label and the reason, the task
 * rejected (3), every remaining turn CANCELLED and the dossier REJECTED.
 */
async function rejectTurn(
  trx: Db,
  deps: ActionDeps,
  acting: Acting,
  reason: string | null,
  origin: AuditOrigin | null,
): Promise<ActionOutcome> {
  const now = deps.clock.now().toISOString();
  await closeTurn(trx, acting, 'REJECTED', now, reason);
  await recordHistory(trx, acting, 'REJECT', acting.context.step.reject_label, now, reason);
  await updateTask(trx, acting.context.task.id, { status: 3, action_at: now, comment: reason });
  await cancelRemainingTurns(trx, acting.context.dossier.id);
  await appendAuditEvent(trx, deps.clock, dossierTrail(acting.context.dossier.id), {
    action: 'rejected',
    actor: auditActorOf(acting),
    origin,
    details: { taskCode: acting.context.task.code, reason },
  });
  await dossierEnded(trx, deps, acting.context.dossier.id, 'REJECTED', now);
  return outcomeOf(trx, acting, false);
}

/** Rejects the active turn of any step (rejectTurn); a reason is required. */
export async function reject(deps: ActionDeps, input: RejectInput): Promise<ActionOutcome> {
  const reason = cleanText(input.reason, 'reason', true);
  return perform(deps, input, (trx, acting) =>
    rejectTurn(trx, deps, acting, reason, input.origin ?? null),
  );
}

/**
 * `reject` inside the caller's transaction (the signing sessions end their session in the same
 * one). An overdue task is refused with 409 TASK_EXPIRED and left to the scheduler.
 */
export async function rejectInTransaction(
  trx: Db,
  deps: ActionDeps,
  input: RejectInput,
): Promise<ActionOutcome> {
  const reason = cleanText(input.reason, 'reason', true);
  const acting = await performable(trx, deps.clock, input);
  return rejectTurn(trx, deps, acting, reason, input.origin ?? null);
}

/**
 * The active turn `actorUserId` may perform now, with the same refusals as the actions (404
 * TASK_NOT_FOUND, 409 DOSSIER_ENDED, TASK_ALREADY_HANDLED, NOT_YOUR_TURN, TASK_EXPIRED), for
 * the signing pipeline to check before it prepares anything.
 */
export async function performable(
  db: Db,
  clock: Clock,
  input: { taskCode: string; actorUserId: number },
): Promise<Acting> {
  const acting = await actingTurn(db, clock, input.taskCode, input.actorUserId);
  if (acting === 'overdue') throw taskExpired(input.taskCode);
  return acting;
}

const sha256Pattern = /^[0-9a-f]{64}$/;

/**
 * The boundary of the signing pipeline. Call it inside the pipeline's own transaction after the
 * signed PDF is in the file store: it checks the actor may perform the active turn of a
 * digital_signature or image_signature step, adds one file version per signed file (version =
 * newest + 1), then advances the workflow like `approve`. Any refusal throws, so the pipeline's
 * transaction rolls back (an overdue task gives 409 TASK_EXPIRED; the scheduler expires it).
 */
export async function completeSignedTurn(
  trx: Db,
  deps: ActionDeps,
  input: SignedTurnInput,
): Promise<ActionOutcome> {
  const { clock } = deps;
  const comment = cleanText(input.comment, 'comment', false);
  const acting = await performable(trx, clock, input);
  requireSignType(
    acting,
    ['digital_signature', 'image_signature'],
    'SIGNATURE_NOT_EXPECTED',
    'Only digital_signature and image_signature steps are signed',
  );
  if (input.newFileVersions.length === 0) {
    throw new DomainError('VALIDATION_ERROR', 'A signature produces at least one file version', {
      field: 'newFileVersions',
    });
  }
  const now = clock.now().toISOString();
  for (const [index, version] of input.newFileVersions.entries()) {
    const field = `newFileVersions.${index}`;
    const file = await mainFileOfDossier(trx, version.fileId, acting.context.dossier.id);
    if (!file) {
      throw new DomainError(
        'FILE_NOT_IN_DOSSIER',
        `File ${version.fileId} is not a main file of the dossier`,
        {
          field: `${field}.fileId`,
        },
      );
    }
    if (
      !sha256Pattern.test(version.sha256) ||
      !Number.isSafeInteger(version.size) ||
      version.size < 0
    ) {
      throw new DomainError(
        'VALIDATION_ERROR',
        'sha256 must be hex SHA-256 and size a byte count',
        {
          field,
        },
      );
    }
    const newest = await newestVersionNumber(trx, file.id);
    await insertFileVersion(trx, {
      file_id: file.id,
      version: newest + 1,
      sha256: version.sha256,
      size: version.size,
      created_at: now,
    });
  }
  return signTurn(trx, deps, acting, comment, input.archives ?? []);
}
