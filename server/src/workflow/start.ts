import crypto from 'node:crypto';
import type { Db } from '../db/database';
import { ApiError } from '../errors/apiError';
import { type EventDeps, turnActivated } from './events';

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
  const dossier = await trx
    .selectFrom('dossiers')
    .select(['id', 'status'])
    .where('id', '=', dossierId)
    .executeTakeFirstOrThrow();
  if (dossier.status !== 'PENDING') {
    throw new ApiError(400, 'DOSSIER_NOT_PENDING', `The dossier is ${dossier.status}, not PENDING`);
  }
  const now = deps.clock.now().toISOString();
  await trx
    .updateTable('dossiers')
    .set({
      status: 'PENDING_SIGN',
      transaction_id: newTransactionId(),
      started_at: now,
      updated_at: now,
    })
    .where('id', '=', dossierId)
    .execute();
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
  const next = await trx
    .selectFrom('turns')
    .innerJoin('process_steps', 'process_steps.id', 'turns.step_id')
    .innerJoin('dossiers', 'dossiers.id', 'turns.dossier_id')
    .select([
      'turns.step_id',
      'turns.step_position',
      'process_steps.deadline_seconds',
      'dossiers.tenant_id',
      'dossiers.organization_id',
    ])
    .where('turns.dossier_id', '=', dossierId)
    .where('turns.step_position', '>', afterPosition)
    .orderBy('turns.step_position')
    .limit(1)
    .executeTakeFirst();
  if (!next) return false;
  const now = deps.clock.now();
  const task = await trx
    .insertInto('tasks')
    .values({
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
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await trx
    .updateTable('turns')
    .set({ task_id: task.id })
    .where('dossier_id', '=', dossierId)
    .where('step_position', '=', next.step_position)
    .execute();
  const first = await trx
    .selectFrom('turns')
    .select('id')
    .where('task_id', '=', task.id)
    .orderBy('turn_order')
    .limit(1)
    .executeTakeFirstOrThrow();
  await trx.updateTable('turns').set({ status: 'ACTIVE' }).where('id', '=', first.id).execute();
  await turnActivated(trx, deps, first.id);
  return true;
}
