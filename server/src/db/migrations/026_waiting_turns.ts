/**
 * The pending task list (endpoint 6) and its `total` start from the caller's turns and keep those
 * whose task is waiting. With only turns_assignee / turns_role, SQLite read every turn the
 * caller ever had and probed its task to learn that: a user with 4,357 tasks, 741 waiting, paid
 * 4,357 probes for the count and again for the page (6–7 ms each at 100k dossiers, growing with
 * the user's history). `turns.task_waiting` is 1 exactly while the turn's task has status 1;
 * triggers keep it so in the same statement as every change (a task's status, a turn's task), so
 * no code path can forget it. Two partial indexes hold only waiting turns, so the count and the
 * page read as many index entries as there are waiting tasks, whatever the history.
 */
export const waitingTurns = `
ALTER TABLE turns ADD COLUMN task_waiting INTEGER NOT NULL DEFAULT 0;
UPDATE turns SET task_waiting = 1 WHERE task_id IN (SELECT id FROM tasks WHERE status = 1);

CREATE TRIGGER tasks_status_waiting AFTER UPDATE OF status ON tasks
WHEN (OLD.status = 1) IS NOT (NEW.status = 1)
BEGIN
  UPDATE turns SET task_waiting = (NEW.status = 1) WHERE task_id = NEW.id;
END;

CREATE TRIGGER turns_insert_waiting AFTER INSERT ON turns
WHEN NEW.task_id IS NOT NULL
BEGIN
  UPDATE turns SET task_waiting = coalesce((SELECT status = 1 FROM tasks WHERE id = NEW.task_id), 0)
  WHERE id = NEW.id;
END;

CREATE TRIGGER turns_task_waiting AFTER UPDATE OF task_id ON turns
BEGIN
  UPDATE turns SET task_waiting = coalesce((SELECT status = 1 FROM tasks WHERE id = NEW.task_id), 0)
  WHERE id = NEW.id;
END;

CREATE INDEX turns_assignee_waiting ON turns(assignee_user_id, task_id) WHERE task_waiting = 1;
CREATE INDEX turns_role_waiting ON turns(role_id, task_id)
  WHERE assignee_user_id IS NULL AND task_waiting = 1;
`;
