import type { AppDeps, Principal } from '../context';
import {
  pendingTasksByDeadline,
  recentHistoryBy,
  taskRowsQuery,
  waitingCountQuery,
} from './queries';
import { taskScopeOf } from './service';

type TaskDeps = Pick<AppDeps, 'db' | 'clock' | 'config' | 'secrets'>;

/**
 * The caller's pending tasks as a dashboard shows them: how many there are, and the `limit`
 * whose deadline comes first (those without a deadline last), each with its step and dossier.
 */
export async function upcomingTasks(deps: TaskDeps, principal: Principal, limit: number) {
  const scope = await taskScopeOf(deps, principal);
  const counted = await waitingCountQuery(deps.db, scope, {}).executeTakeFirstOrThrow();
  const total = Number(counted.total);
  const keys = total === 0 ? [] : await pendingTasksByDeadline(deps.db, scope, limit).execute();
  const byId = new Map(
    keys.length === 0
      ? []
      : (
          await taskRowsQuery(
            deps.db,
            keys.map((key) => key.id),
          ).execute()
        ).map((row) => [row.task_id, row]),
  );
  const rows = keys.map((key) => byId.get(key.id)!);
  return {
    total,
    items: rows.map((row) => ({
      taskId: row.task_id,
      taskCode: row.task_code,
      stepName: row.step_name,
      signType: row.sign_type,
      assignedAt: row.assigned_at,
      expireAt: row.expire_at,
      folderId: row.folder_id,
      documentTitle: row.document_title,
    })),
  };
}

/** The caller's own newest history records (approved, rejected, overdue), at most `limit`. */
export async function recentTaskActivity(deps: TaskDeps, principal: Principal, limit: number) {
  const scope = await taskScopeOf(deps, principal);
  const rows = await recentHistoryBy(deps.db, scope, limit).execute();
  return rows.map((row) => ({
    action: row.action,
    at: row.action_at,
    comment: row.comment,
    taskId: row.task_id,
    stepName: row.step_name,
    folderId: row.folder_id,
    documentTitle: row.document_title,
  }));
}
