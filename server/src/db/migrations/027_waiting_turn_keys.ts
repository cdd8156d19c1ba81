import { postgresOf } from './sqlParts';

/**
 * The pending task list at a million tasks: after migration 026 the count and the page still
 * probed the task of every waiting turn of the caller (tenant, organization, assignedAt) and the
 * page sorted them all to return 20: 3,094 waiting tasks cost 3.2 ms to count and 4 ms to page.
 * A waiting turn now carries its task's tenant, organization and assignedAt (`task_tenant_id`,
 * `task_organization_id`, `task_assigned_at`), set by the same triggers as `task_waiting` and in
 * the same statement as every change, and the waiting-turn indexes hold them: the count and the
 * page keys are read from the index alone, by task id within the caller's tenant as before (what
 * lets SQLite merge the assignee and role halves without sorting them; the role index also holds `assignee_user_id`, always
 * NULL there, so that SQLite need not read the row to check it). The three columns are meaningful
 * while `task_waiting` is 1 (a turn's task that waits again gets them anew).
 */
/** A turn (new, or moved to another task) takes its task's waiting state and keys. */
const turnTakesItsTask = `BEGIN
  UPDATE turns SET
    task_waiting = coalesce((SELECT status = 1 FROM tasks WHERE id = NEW.task_id), 0),
    (task_tenant_id, task_organization_id, task_assigned_at) =
      (SELECT tenant_id, organization_id, assigned_at FROM tasks WHERE id = NEW.task_id)
  WHERE id = NEW.id;
END;`;

const keyColumns = `ALTER TABLE turns ADD COLUMN task_tenant_id INTEGER;
ALTER TABLE turns ADD COLUMN task_organization_id INTEGER;
ALTER TABLE turns ADD COLUMN task_assigned_at TEXT;
UPDATE turns SET (task_tenant_id, task_organization_id, task_assigned_at) =
  (SELECT tenant_id, organization_id, assigned_at FROM tasks WHERE tasks.id = turns.task_id)
WHERE task_waiting = 1;`;

const waitingIndexes = `DROP INDEX turns_assignee_waiting;
DROP INDEX turns_role_waiting;
CREATE INDEX turns_assignee_waiting
  ON turns(assignee_user_id, task_tenant_id, task_id, task_assigned_at, task_organization_id)
  WHERE task_waiting = 1;
CREATE INDEX turns_role_waiting
  ON turns(role_id, task_tenant_id, task_id, task_assigned_at, task_organization_id,
    assignee_user_id)
  WHERE assignee_user_id IS NULL AND task_waiting = 1;`;

export const waitingTurnKeys = `
${keyColumns}

DROP TRIGGER tasks_status_waiting;
CREATE TRIGGER tasks_status_waiting AFTER UPDATE OF status ON tasks
WHEN (OLD.status = 1) IS NOT (NEW.status = 1)
BEGIN
  UPDATE turns SET task_waiting = (NEW.status = 1), task_tenant_id = NEW.tenant_id,
    task_organization_id = NEW.organization_id, task_assigned_at = NEW.assigned_at
  WHERE task_id = NEW.id;
END;

CREATE TRIGGER tasks_waiting_keys AFTER UPDATE OF tenant_id, organization_id, assigned_at ON tasks
WHEN OLD.tenant_id IS NOT NEW.tenant_id OR OLD.organization_id IS NOT NEW.organization_id
  OR OLD.assigned_at IS NOT NEW.assigned_at
BEGIN
  UPDATE turns SET task_tenant_id = NEW.tenant_id, task_organization_id = NEW.organization_id,
    task_assigned_at = NEW.assigned_at
  WHERE task_id = NEW.id;
END;

DROP TRIGGER turns_insert_waiting;
CREATE TRIGGER turns_insert_waiting AFTER INSERT ON turns
WHEN NEW.task_id IS NOT NULL
${turnTakesItsTask}

DROP TRIGGER turns_task_waiting;
CREATE TRIGGER turns_task_waiting AFTER UPDATE OF task_id ON turns
${turnTakesItsTask}

${waitingIndexes}
`;

/**
 * The same on PostgreSQL. The turn triggers of migration 026 keep their definitions (SQLite
 * recreates them only to change their bodies); their function takes the keys now too. A turn
 * whose task does not exist (task_id NULL) gets NULL keys, as SQLite's row-value subquery gives.
 */
export const waitingTurnKeysPostgres = `
${postgresOf(keyColumns)}

CREATE OR REPLACE FUNCTION esign_tasks_status_waiting() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE turns SET task_waiting = CASE WHEN NEW.status = 1 THEN 1 ELSE 0 END,
    task_tenant_id = NEW.tenant_id, task_organization_id = NEW.organization_id,
    task_assigned_at = NEW.assigned_at
  WHERE task_id = NEW.id;
  RETURN NULL;
END $$;

CREATE FUNCTION esign_tasks_waiting_keys() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE turns SET task_tenant_id = NEW.tenant_id, task_organization_id = NEW.organization_id,
    task_assigned_at = NEW.assigned_at
  WHERE task_id = NEW.id;
  RETURN NULL;
END $$;
CREATE TRIGGER tasks_waiting_keys AFTER UPDATE OF tenant_id, organization_id, assigned_at ON tasks
  FOR EACH ROW WHEN (OLD.tenant_id IS DISTINCT FROM NEW.tenant_id
    OR OLD.organization_id IS DISTINCT FROM NEW.organization_id
    OR OLD.assigned_at IS DISTINCT FROM NEW.assigned_at)
  EXECUTE FUNCTION esign_tasks_waiting_keys();

CREATE OR REPLACE FUNCTION esign_turns_take_task() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.task_waiting := coalesce(
    (SELECT CASE WHEN status = 1 THEN 1 ELSE 0 END FROM tasks WHERE id = NEW.task_id), 0);
  SELECT tenant_id, organization_id, assigned_at
    INTO NEW.task_tenant_id, NEW.task_organization_id, NEW.task_assigned_at
    FROM tasks WHERE id = NEW.task_id;
  RETURN NEW;
END $$;

${postgresOf(waitingIndexes)}
`;
