import type { Selectable, Updateable } from 'kysely';
import type { Db } from '../../db/database';
import type { StepKind, TurnsTable } from '../../db/schema';

export type TurnRow = Selectable<TurnsTable>;

export function turnsOfTask(db: Db, taskId: number): Promise<TurnRow[]> {
  return db
    .selectFrom('turns')
    .selectAll()
    .where('task_id', '=', taskId)
    .orderBy('turn_order')
    .execute();
}

export async function updateTurn(
  db: Db,
  turnId: number,
  changes: Updateable<TurnsTable>,
): Promise<void> {
  await db.updateTable('turns').set(changes).where('id', '=', turnId).execute();
}

/** The turns nobody will perform any more once the dossier ends. */
export async function cancelRemainingTurns(db: Db, dossierId: number): Promise<void> {
  await db
    .updateTable('turns')
    .set({ status: 'CANCELLED' })
    .where('dossier_id', '=', dossierId)
    .where('status', 'in', ['WAITING', 'ACTIVE'])
    .execute();
}

/** The first step after `afterPosition` that has turns, with what its task needs. */
export function nextStepWithTurns(db: Db, dossierId: number, afterPosition: number) {
  return db
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
}

/** The turns of one step of the dossier join the step's task. */
export async function attachTurnsToTask(
  db: Db,
  dossierId: number,
  stepPosition: number,
  taskId: number,
): Promise<void> {
  await db
    .updateTable('turns')
    .set({ task_id: taskId })
    .where('dossier_id', '=', dossierId)
    .where('step_position', '=', stepPosition)
    .execute();
}

export function firstTurnOfTask(db: Db, taskId: number): Promise<{ id: number }> {
  return db
    .selectFrom('turns')
    .select('id')
    .where('task_id', '=', taskId)
    .orderBy('turn_order')
    .limit(1)
    .executeTakeFirstOrThrow();
}

export function dossierOfTurn(db: Db, turnId: number): Promise<{ dossier_id: number }> {
  return db
    .selectFrom('turns')
    .select('dossier_id')
    .where('id', '=', turnId)
    .executeTakeFirstOrThrow();
}

/** Every turn of a dossier with its step, in signing order (step, then turn order). */
export function turnsWithSteps(
  db: Db,
  dossierId: number,
): Promise<
  (TurnRow & { kind: StepKind; step_code: string; step_name: string; position: number })[]
> {
  return db
    .selectFrom('turns')
    .innerJoin('process_steps as s', 's.id', 'turns.step_id')
    .selectAll('turns')
    .select(['s.kind', 's.step_code', 's.name as step_name', 's.position'])
    .where('turns.dossier_id', '=', dossierId)
    .orderBy('turns.step_position')
    .orderBy('turns.turn_order')
    .execute();
}
