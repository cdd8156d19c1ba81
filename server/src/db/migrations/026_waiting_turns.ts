import { postgresOf } from './sqlParts';

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
const waitingColumn = `ALTER TABLE turns ADD COLUMN task_waiting INTEGER NOT NULL DEFAULT 0;
UPDATE turns SET task_waiting = 1 WHERE task_id IN (SELECT id FROM tasks WHERE status = 1);`;

const waitingIndexes = `CREATE INDEX turns_assignee_waiting ON turns(assignee_user_id, task_id) WHERE task_waiting = 1;
CREATE INDEX turns_role_waiting ON turns(role_id, task_id)
  WHERE assignee_user_id IS NULL AND task_waiting = 1;`;

export const waitingTurns = `
${waitingColumn}

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

${waitingIndexes}
`;

/**
 * The same on PostgreSQL, with SQLite's trigger names. A task's change updates its turns AFTER
 * (another table); a turn takes its task's state BEFORE it is written (SQLite's triggers rewrite
 * the turn just after; the row that results is the same). `(x = 1)` is a boolean on PostgreSQL:
 * CASE makes the 0/1 integer SQLite stores.
 */
export const waitingTurnsPostgres = `
${postgresOf(waitingColumn)}

CREATE FUNCTION esign_tasks_status_waiting() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE turns SET task_waiting = CASE WHEN NEW.status = 1 THEN 1 ELSE 0 END
  WHERE task_id = NEW.id;
  RETURN NULL;
END $$;
CREATE TRIGGER tasks_status_waiting AFTER UPDATE OF status ON tasks
  FOR EACH ROW WHEN ((OLD.status = 1) IS DISTINCT FROM (NEW.status = 1))
  EXECUTE FUNCTION esign_tasks_status_waiting();

CREATE FUNCTION esign_turns_take_task() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.task_waiting := coalesce(
    (SELECT CASE WHEN status = 1 THEN 1 ELSE 0 END FROM tasks WHERE id = NEW.task_id), 0);
  RETURN NEW;
END $$;
CREATE TRIGGER turns_insert_waiting BEFORE INSERT ON turns
  FOR EACH ROW WHEN (NEW.task_id IS NOT NULL) EXECUTE FUNCTION esign_turns_take_task();
CREATE TRIGGER turns_task_waiting BEFORE UPDATE OF task_id ON turns
  FOR EACH ROW EXECUTE FUNCTION esign_turns_take_task();

${postgresOf(waitingIndexes)}
`;
