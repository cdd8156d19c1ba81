import crypto from 'node:crypto';
import type { Db } from '../db/database';
import { DomainError } from '../errors/domainError';
import { type EventDeps, turnActivated } from './events';
import { dossierStatus, updateDossier } from './queries/dossiers';
import { insertTask } from './queries/tasks';
import { attachTurnsToTask, firstTurnOfTask, nextStepWithTurns, updateTurn } from './queries/turns';

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
