import crypto from 'node:crypto';
import { appendAuditEvent } from '../audit/chain';
import { dossierTrail, systemActor } from '../audit/subject';
import type { Db } from '../db/database';
import type { DossierStatus } from '../db/schema';
import { DomainError } from '../errors/domainError';
import type { ArchivedVersion } from './archive';
import { dossierCompleted, dossierRejected, type EventDeps, turnActivated } from './events';
import { dossierProgress, dossierStatus, updateDossier } from './queries/dossiers';
import { insertTask } from './queries/tasks';
import { attachTurnsToTask, firstTurnOfTask, nextStepWithTurns, updateTurn } from './queries/turns';

/**
 * The dossier lifecycle: the one place where a dossier changes state.
 *
 * ```
 * PENDING ──start──▶ PENDING_SIGN ──first signature──▶ IN_PROGRESS ──last step signed──▶ COMPLETED
 *                         │                                 ├──── a turn rejected ─────▶ REJECTED
 *                         └─────────────────────────────────┴──── a task overdue ──────▶ EXPIRED
 * ```
 *
 * `startWorkflow` starts it (dossier creation), `openNextStep` opens each step's task, and
 * `dossierEnded` ends it with its events. The first signature's PENDING_SIGN → IN_PROGRESS is
 * counted with the signature (`countSignature`). What moves a dossier along is a turn: the task
 * actions (workflow/actions.ts: approve, acknowledge, reject, and `completeSignedTurn` for the
 * signing sessions, which call nothing else to change a dossier) and the deadline scheduler
 * (workflow/deadlines.ts) call these, inside their transaction.
 */

/** How a dossier's lifecycle ends: every signer signed, someone rejected, or a deadline passed. */
export type DossierOutcome = Extract<DossierStatus, 'COMPLETED' | 'REJECTED' | 'EXPIRED'>;

export const endedStatuses: readonly DossierStatus[] = ['COMPLETED', 'REJECTED', 'EXPIRED'];
/** States in which the workflow runs and its tasks can be acted on. */
export const runningStatuses: readonly DossierStatus[] = ['PENDING_SIGN', 'IN_PROGRESS'];

const endColumn = {
  COMPLETED: 'completed_at',
  REJECTED: 'rejected_at',
  EXPIRED: 'expired_at',
} as const;

/**
 * Ends a running dossier inside the caller's transaction: status and its time column
 * (completed_at, rejected_at or expired_at = `at`).
 *
 * This is the one place where the end of a dossier is written, so its events are emitted here in
 * the same transaction (workflow/events.ts): `document.completed` and
 * `notification.process_finished` for COMPLETED, `document.rejected` and
 * `notification.task_rejected` for REJECTED (the REJECTED turn, written before, holds the reason
 * and who rejected), nothing for EXPIRED (the spec: an expired dossier produces no webhook).
 *
 * COMPLETED requires signedCount to equal requiredCount, as the spec defines it; anything else
 * is a bug of the engine and aborts the transaction. `archived` names the archive versions the
 * completing action recorded just before (workflow/archive.ts) in the `completed` audit event.
 */
export async function dossierEnded(
  trx: Db,
  deps: EventDeps,
  dossierId: number,
  outcome: DossierOutcome,
  at: string,
  archived: ArchivedVersion[] = [],
): Promise<void> {
  const dossier = await dossierProgress(trx, dossierId);
  if (!runningStatuses.includes(dossier.status)) {
    throw new DomainError(
      'DOSSIER_ENDED',
      `The dossier is ${dossier.status}; its lifecycle has ended`,
    );
  }
  if (outcome === 'COMPLETED' && dossier.signed_count !== dossier.required_count) {
    throw new Error(
      `dossier ${dossierId} cannot complete: signedCount ${dossier.signed_count} of requiredCount ${dossier.required_count}`,
    );
  }
  await updateDossier(trx, dossierId, {
    status: outcome,
    [endColumn[outcome]]: at,
    updated_at: deps.clock.now().toISOString(),
  });
  // The rejecting turn records its own event, naming who rejected and why.
  if (outcome !== 'REJECTED') {
    await appendAuditEvent(trx, deps.clock, dossierTrail(dossierId), {
      action: outcome === 'COMPLETED' ? 'completed' : 'expired',
      actor: systemActor,
      details: {
        signedCount: dossier.signed_count,
        requiredCount: dossier.required_count,
        ...(archived.length > 0 ? { archived } : {}),
      },
    });
  }
  if (outcome === 'COMPLETED') await dossierCompleted(trx, deps, dossierId);
  if (outcome === 'REJECTED') await dossierRejected(trx, deps, dossierId);
}

/** Process instance code: what the spec calls `transactionId`. */
export function newTransactionId(): string {
  return `PI${crypto.randomBytes(8).toString('hex').toUpperCase()}`;
}

/**
 * Moves a dossier from PENDING to PENDING_SIGN inside the caller's transaction: gives it its
 * transactionId and opens the task of the first step (the step's turns join the task; its
 * first turn becomes active). Turns must already exist (dossier creation writes them WAITING).
 */
export async function startWorkflow(trx: Db, deps: EventDeps, dossierId: number): Promise<void> {
  const dossier = await dossierStatus(trx, dossierId);
  if (dossier.status !== 'PENDING') {
    throw new DomainError('DOSSIER_NOT_PENDING', `The dossier is ${dossier.status}, not PENDING`);
  }
  const now = deps.clock.now().toISOString();
  await updateDossier(trx, dossierId, {
    status: 'PENDING_SIGN',
    transaction_id: newTransactionId(),
    started_at: now,
    updated_at: now,
  });
  await openNextStep(trx, deps, dossierId, 0);
}

/**
 * Opens the first step after `afterPosition` that has turns: one task for the step, its turns
 * attached, the first turn active and its handler notified (workflow/events.ts). Returns false
 * when no step is left.
 */
export async function openNextStep(
  trx: Db,
  deps: EventDeps,
  dossierId: number,
  afterPosition: number,
): Promise<boolean> {
  const next = await nextStepWithTurns(trx, dossierId, afterPosition);
  if (!next) return false;
  const now = deps.clock.now();
  const taskId = await insertTask(trx, {
    code: crypto.randomUUID(),
    tenant_id: next.tenant_id,
    organization_id: next.organization_id,
    dossier_id: dossierId,
    step_id: next.step_id,
    status: 1,
    assigned_at: now.toISOString(),
    expire_at:
      next.deadline_seconds === null
        ? null
        : new Date(now.getTime() + next.deadline_seconds * 1000).toISOString(),
  });
  await attachTurnsToTask(trx, dossierId, next.step_position, taskId);
  const first = await firstTurnOfTask(trx, taskId);
  await updateTurn(trx, first.id, { status: 'ACTIVE' });
  await turnActivated(trx, deps, first.id);
  return true;
}
