import type { Insertable, Updateable } from 'kysely';
import type { Db } from '../../db/database';
import type { TasksTable } from '../../db/schema';
import type { StepRow } from '../../processes/queries';

/** A task with the state of its dossier, by code (API callers) or id (the workflow itself). */
export function taskWithDossier(db: Db, where: { code: string } | { id: number }) {
  return db
    .selectFrom('tasks as t')
    .innerJoin('dossiers as d', 'd.id', 't.dossier_id')
    .select([
      't.id',
      't.code',
      't.tenant_id',
      't.organization_id',
      't.dossier_id',
      't.step_id',
      't.status',
      't.expire_at',
      'd.status as dossier_status',
      'd.signed_count',
      'd.required_count',
    ])
    .$if('code' in where, (query) => query.where('t.code', '=', (where as { code: string }).code))
    .$if('id' in where, (query) => query.where('t.id', '=', (where as { id: number }).id))
    .executeTakeFirst();
}

export function stepById(db: Db, stepId: number): Promise<StepRow> {
  return db
    .selectFrom('process_steps')
    .selectAll()
    .where('id', '=', stepId)
    .executeTakeFirstOrThrow();
}

export async function insertTask(db: Db, row: Insertable<TasksTable>): Promise<number> {
  const task = await db.insertInto('tasks').values(row).returning('id').executeTakeFirstOrThrow();
  return task.id;
}

export async function updateTask(
  db: Db,
  taskId: number,
  changes: Updateable<TasksTable>,
): Promise<void> {
  await db.updateTable('tasks').set(changes).where('id', '=', taskId).execute();
}

export function taskStatus(db: Db, taskId: number): Promise<{ status: number }> {
  return db.selectFrom('tasks').select('status').where('id', '=', taskId).executeTakeFirstOrThrow();
}

/** The code of the dossier's newest task: the one a step that just opened created. */
export function newestTaskCode(db: Db, dossierId: number): Promise<{ code: string }> {
  return db
    .selectFrom('tasks')
    .select('code')
    .where('dossier_id', '=', dossierId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
}

export async function taskExpireAt(db: Db, taskId: number): Promise<string | null> {
  const task = await db
    .selectFrom('tasks')
    .select('expire_at')
    .where('id', '=', taskId)
    .executeTakeFirst();
  return task?.expire_at ?? null;
}

/**
 * Waiting tasks whose deadline is at or before `now`, earliest first. `status = 1 AND expire_at
 * IS NOT NULL` matches the partial index tasks_waiting_deadline, so a pass reads only what is due.
 */
export function overdueTasks(db: Db, now: string, limit: number) {
  return db
    .selectFrom('tasks')
    .select('id')
    .where('status', '=', 1)
    .where('expire_at', 'is not', null)
    .where('expire_at', '<=', now)
    .orderBy('expire_at')
    .limit(limit);
}
