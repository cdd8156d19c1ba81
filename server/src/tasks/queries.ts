import { type ExpressionBuilder, sql } from 'kysely';
import type { Db } from '../db/database';
import type { Database, DossierStatus, HistoryAction, SignType, TasksTable } from '../db/schema';
import { plainMatches } from '../directory/queries/search';
import type { Participant } from '../workflow/taskContext';

/**
 * Who a task list is for: the caller as a participant (user, roles held, delegations in force to
 * them), in its tenant, and with an organization key only in the key's organization.
 */
export interface TaskScope extends Participant {
  tenantId: number;
  organizationId: number | null;
}

/** Filters of the task list that apply to both pending and handled records. */
export interface TaskRowFilter {
  fromDate?: string | undefined;
  toDate?: string | undefined;
  documentId?: string | undefined;
  keyword?: string | undefined;
}

/** A task with its step and dossier, as the task item shows them. */
export interface TaskRow {
  task_id: number;
  task_code: string;
  task_status: number;
  assigned_at: string;
  expire_at: string | null;
  task_action_at: string | null;
  task_comment: string | null;
  step_code: string;
  step_name: string;
  sign_type: SignType;
  folder_id: number;
  document_id: string | null;
  document_uuid: string;
  document_title: string;
  transaction_id: string | null;
  ecm_class_code: string | null;
  dossier_status: DossierStatus;
  required_count: number;
  signed_count: number;
  document_created_at: string;
}

/** One record of the task list: a pending task (no action) or a handled turn (a history row). */
export interface TaskListRow extends TaskRow {
  kind: 'pending' | 'handled';
  action: HistoryAction | null;
  action_at: string | null;
  comment: string | null;
}

type WithTask = Database & { t: TasksTable };

/**
 * `documentId` and `keyword` (dossier title or step name, folded without diacritics as migration 025 keys them), as
 * conditions on the task `t`: its dossier and step are probed by primary key, never joined for
 * rows the filters do not need.
 */
function dossierFilters(filter: TaskRowFilter) {
  return (eb: ExpressionBuilder<WithTask, 't'>) => {
    const conditions = [];
    if (filter.documentId !== undefined) {
      conditions.push(
        eb.exists(
          eb
            .selectFrom('dossiers as fd')
            .select('fd.id')
            .whereRef('fd.id', '=', 't.dossier_id')
            .where('fd.document_id', '=', filter.documentId),
        ),
      );
    }
    if (filter.keyword !== undefined) {
      const keyword = filter.keyword;
      conditions.push(
        eb.or([
          eb.exists(
            eb
              .selectFrom('dossiers as kd')
              .select('kd.id')
              .whereRef('kd.id', '=', 't.dossier_id')
              .where(plainMatches('kd.search_key', keyword)),
          ),
          eb.exists(
            eb
              .selectFrom('process_steps as ks')
              .select('ks.id')
              .whereRef('ks.id', '=', 't.step_id')
              .where(plainMatches('ks.search_key', keyword)),
          ),
        ]),
      );
    }
    return eb.and(conditions);
  };
}

/**
 * Tasks waiting (status 1) in which the caller takes part: the assignee of one of its turns (or
 * of a user who delegated to the caller), or a holder of the role of a turn nobody has taken.
 * Starts from the caller's waiting turns (turns_assignee_waiting, turns_role_waiting: the literal
 * `task_waiting = 1` lets SQLite use those partial indexes, the turn's copy of the tenant keeps it
 * on them), so the cost follows the caller's
 * waiting tasks, not the table nor the caller's history. `fromDate`/`toDate` bound assignedAt.
 */
export function pendingTasks(db: Db, scope: TaskScope, filter: TaskRowFilter) {
  const assignees = [scope.userId, ...scope.delegatorIds];
  const participation = (eb: ExpressionBuilder<WithTask, 't'>) => {
    const assigned = eb
      .selectFrom('turns as p')
      .select('p.task_id')
      .where('p.assignee_user_id', 'in', assignees)
      .where('p.task_waiting', '=', sql.lit(1))
      .where('p.task_tenant_id', '=', scope.tenantId);
    const byRole = eb
      .selectFrom('turns as r')
      .select('r.task_id')
      .where('r.role_id', 'in', scope.roleIds)
      .where('r.assignee_user_id', 'is', null)
      .where('r.task_waiting', '=', sql.lit(1))
      .where('r.task_tenant_id', '=', scope.tenantId);
    const taskIds = scope.roleIds.length > 0 ? assigned.union(byRole) : assigned;
    return eb('t.id', 'in', taskIds.$narrowType<{ task_id: number }>());
  };
  return db
    .selectFrom('tasks as t')
    .where(participation)
    .where('t.status', '=', 1)
    .where('t.tenant_id', '=', scope.tenantId)
    .$if(scope.organizationId !== null, (query) =>
      query.where('t.organization_id', '=', scope.organizationId!),
    )
    .$if(filter.fromDate !== undefined, (query) =>
      query.where('t.assigned_at', '>=', filter.fromDate!),
    )
    .$if(filter.toDate !== undefined, (query) => query.where('t.assigned_at', '<=', filter.toDate!))
    .where(dossierFilters(filter));
}

/**
 * The caller's handled turns: history rows naming the caller as actor (an OVERDUE row names the
 * assignee), one per turn, with the given actions. Starts from history_actor, which also gives
 * the newest-first order. `fromDate`/`toDate` bound actionAt.
 */
export function handledTurns(
  db: Db,
  scope: TaskScope,
  filter: TaskRowFilter,
  actions: HistoryAction[],
) {
  return db
    .selectFrom('history as h')
    .innerJoin('tasks as t', 't.id', 'h.task_id')
    .where('h.actor_user_id', '=', scope.userId)
    .where('h.tenant_id', '=', scope.tenantId)
    .where('h.action', 'in', actions)
    .$if(scope.organizationId !== null, (query) =>
      query.where('t.organization_id', '=', scope.organizationId!),
    )
    .$if(filter.fromDate !== undefined, (query) =>
      query.where('h.action_at', '>=', filter.fromDate!),
    )
    .$if(filter.toDate !== undefined, (query) => query.where('h.action_at', '<=', filter.toDate!))
    .where(dossierFilters(filter));
}

/** Whether `filter` names the dossier or step (documentId, keyword): only `pendingTasks` can apply those. */
export function filtersDossiers(filter: TaskRowFilter): boolean {
  return filter.documentId !== undefined || filter.keyword !== undefined;
}

/**
 * The same records as `pendingTasks` for a filter without documentId or keyword, as (id,
 * assigned_at) keys read from the waiting-turn indexes alone: a waiting turn carries its task's
 * tenant, organization and assignedAt (migration 027), and task_waiting = 1 is task status 1.
 * DISTINCT and UNION remove a task reached twice (two of the caller's turns, or a turn and a role).
 */
function waitingKeys(db: Db, scope: TaskScope, filter: TaskRowFilter) {
  const assignees = [scope.userId, ...scope.delegatorIds];
  const assigned = db
    .selectFrom('turns as p')
    .select(['p.task_id as id', 'p.task_assigned_at as assigned_at'])
    .distinct()
    .where('p.assignee_user_id', 'in', assignees)
    .where('p.task_waiting', '=', sql.lit(1))
    .where('p.task_tenant_id', '=', scope.tenantId)
    .$if(scope.organizationId !== null, (query) =>
      query.where('p.task_organization_id', '=', scope.organizationId!),
    )
    .$if(filter.fromDate !== undefined, (query) =>
      query.where('p.task_assigned_at', '>=', filter.fromDate!),
    )
    .$if(filter.toDate !== undefined, (query) =>
      query.where('p.task_assigned_at', '<=', filter.toDate!),
    );
  if (scope.roleIds.length === 0) return assigned;
  const byRole = db
    .selectFrom('turns as r')
    .select(['r.task_id as id', 'r.task_assigned_at as assigned_at'])
    .where('r.role_id', 'in', scope.roleIds)
    .where('r.assignee_user_id', 'is', null)
    .where('r.task_waiting', '=', sql.lit(1))
    .where('r.task_tenant_id', '=', scope.tenantId)
    .$if(scope.organizationId !== null, (query) =>
      query.where('r.task_organization_id', '=', scope.organizationId!),
    )
    .$if(filter.fromDate !== undefined, (query) =>
      query.where('r.task_assigned_at', '>=', filter.fromDate!),
    )
    .$if(filter.toDate !== undefined, (query) =>
      query.where('r.task_assigned_at', '<=', filter.toDate!),
    );
  return assigned.union(byRole);
}

/** `countQuery(pendingTasks(...))` for a filter without documentId or keyword, from the index. */
export function waitingCountQuery(db: Db, scope: TaskScope, filter: TaskRowFilter) {
  return db
    .selectFrom(waitingKeys(db, scope, filter).as('w'))
    .select(sql<number>`count(*)`.as('total'));
}

/** `pageQuery(db, pendingTasks(...), null, paging)` for a filter without documentId or keyword. */
export function waitingPageQuery(db: Db, scope: TaskScope, filter: TaskRowFilter, paging: Paging) {
  return db
    .selectFrom(waitingKeys(db, scope, filter).as('w'))
    .select([
      sql<'pending'>`'pending'`.as('kind'),
      sql<number>`w.id`.as('task_id'),
      sql<number | null>`NULL`.as('history_id'),
      sql<string>`w.assigned_at`.as('sort_at'),
      sql<number>`w.id`.as('sort_id'),
    ])
    .orderBy('sort_at', 'desc')
    .orderBy('sort_id', 'desc')
    .limit(paging.pageSize)
    .offset((paging.page - 1) * paging.pageSize)
    .$castTo<ListKey>();
}

export type PendingQuery = ReturnType<typeof pendingTasks>;
export type HandledQuery = ReturnType<typeof handledTurns>;

/** The number of matches of a pending or handled query. */
export function countQuery(query: PendingQuery | HandledQuery) {
  return (query as PendingQuery).select(sql<number>`count(*)`.as('total'));
}

export interface Paging {
  page: number;
  pageSize: number;
}

/** What orders and identifies a record of the list: narrow, so a deep page sorts little. */
export interface ListKey {
  kind: 'pending' | 'handled';
  task_id: number;
  history_id: number | null;
  sort_at: string;
  sort_id: number;
}

/**
 * The keys of one page of pending records, handled records or both merged, newest first by
 * assignedAt (pending) or actionAt (handled).
 */
export function pageQuery(
  db: Db,
  pending: PendingQuery | null,
  handled: HandledQuery | null,
  paging: Paging,
) {
  const pendingKeys = pending
    ?.select([
      sql<'pending'>`'pending'`.as('kind'),
      't.id as task_id',
      sql<number | null>`NULL`.as('history_id'),
      't.assigned_at as sort_at',
      't.id as sort_id',
    ])
    .$castTo<ListKey>();
  const handledKeys = handled
    ?.select([
      sql<'handled'>`'handled'`.as('kind'),
      'h.task_id as task_id',
      'h.id as history_id',
      'h.action_at as sort_at',
      'h.id as sort_id',
    ])
    .$castTo<ListKey>();
  const keys =
    pendingKeys && handledKeys ? pendingKeys.unionAll(handledKeys) : (pendingKeys ?? handledKeys!);
  return db
    .selectFrom(keys.as('items'))
    .selectAll()
    .orderBy('sort_at', 'desc')
    .orderBy('kind')
    .orderBy('sort_id', 'desc')
    .limit(paging.pageSize)
    .offset((paging.page - 1) * paging.pageSize);
}

/** Tasks with their step and dossier, by id (primary keys). */
export function taskRowsQuery(db: Db, taskIds: number[]) {
  return db
    .selectFrom('tasks as t')
    .innerJoin('dossiers as d', 'd.id', 't.dossier_id')
    .innerJoin('process_steps as s', 's.id', 't.step_id')
    .select([
      't.id as task_id',
      't.code as task_code',
      't.status as task_status',
      't.assigned_at as assigned_at',
      't.expire_at as expire_at',
      't.action_at as task_action_at',
      't.comment as task_comment',
      's.step_code as step_code',
      's.name as step_name',
      's.sign_type as sign_type',
      'd.id as folder_id',
      'd.document_id as document_id',
      'd.uuid as document_uuid',
      'd.title as document_title',
      'd.transaction_id as transaction_id',
      'd.ecm_class_code as ecm_class_code',
      'd.status as dossier_status',
      'd.required_count as required_count',
      'd.signed_count as signed_count',
      'd.created_at as document_created_at',
    ])
    .where('t.id', 'in', taskIds);
}

/** One page of the list, each record with its task, step, dossier and (handled) action. */
export async function listPage(
  db: Db,
  pending: PendingQuery | null,
  handled: HandledQuery | null,
  paging: Paging,
): Promise<TaskListRow[]> {
  return rowsOfKeys(db, await pageQuery(db, pending, handled, paging).execute());
}

/** The records of a page's keys, each with its task, step, dossier and (handled) action. */
export async function rowsOfKeys(db: Db, keys: ListKey[]): Promise<TaskListRow[]> {
  if (keys.length === 0) return [];
  const tasks = new Map(
    (await taskRowsQuery(db, [...new Set(keys.map((key) => key.task_id))]).execute()).map((row) => [
      row.task_id,
      row,
    ]),
  );
  const historyIds = keys.flatMap((key) => (key.history_id === null ? [] : [key.history_id]));
  const actions = new Map(
    historyIds.length === 0
      ? []
      : (
          await db
            .selectFrom('history')
            .select(['id', 'action', 'action_at', 'comment'])
            .where('id', 'in', historyIds)
            .execute()
        ).map((row) => [row.id, row]),
  );
  return keys.map((key) => {
    const action = key.history_id === null ? undefined : actions.get(key.history_id);
    return {
      ...tasks.get(key.task_id)!,
      kind: key.kind,
      action: action?.action ?? null,
      action_at: action?.action_at ?? null,
      comment: action?.comment ?? null,
    };
  });
}

/** One task as a row of the list, for the task detail. */
export function taskRowById(db: Db, taskId: number): Promise<TaskRow> {
  return taskRowsQuery(db, [taskId]).executeTakeFirstOrThrow();
}

/** History rows with their task's code and step, oldest first. */
export function historyRows(db: Db, where: { dossierId: number } | { taskId: number }) {
  return db
    .selectFrom('history as h')
    .innerJoin('tasks as t', 't.id', 'h.task_id')
    .innerJoin('process_steps as s', 's.id', 't.step_id')
    .select([
      'h.id',
      'h.task_id',
      't.code as task_code',
      's.step_code',
      's.name as step_name',
      's.kind as step_kind',
      'h.action',
      'h.action_label',
      'h.action_at',
      'h.comment',
      'h.actor_user_id',
      'h.actor_name',
      'h.actor_username',
      'h.actor_email',
      'h.actor_phone',
    ])
    .$if('dossierId' in where, (query) =>
      query.where('h.dossier_id', '=', (where as { dossierId: number }).dossierId),
    )
    .$if('taskId' in where, (query) =>
      query.where('h.task_id', '=', (where as { taskId: number }).taskId),
    )
    .orderBy('h.action_at')
    .orderBy('h.id')
    .execute();
}

export type HistoryRow = Awaited<ReturnType<typeof historyRows>>[number];

/** The code and name of the role a role turn (or its step) names, shown as the assignee. */
export function roleLabel(
  db: Db,
  roleId: number,
): Promise<{ code: string; name: string } | undefined> {
  return db
    .selectFrom('roles')
    .select(['code', 'name'])
    .where('id', '=', roleId)
    .executeTakeFirst();
}

/** The ACTIVE turns (the one due now) of these tasks, while the task waits. */
export function activeTurnsOf(db: Db, taskIds: number[]) {
  if (taskIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('turns as u')
    .innerJoin('tasks as t', 't.id', 'u.task_id')
    .selectAll('u')
    .where('u.task_id', 'in', taskIds)
    .where('u.status', '=', 'ACTIVE')
    .where('t.status', '=', 1)
    .execute();
}

/** The dossier a task belongs to, by the task's numeric id (deep links). */
export function dossierIdOfTask(db: Db, taskId: number): Promise<number | undefined> {
  return db
    .selectFrom('tasks')
    .select('dossier_id')
    .where('id', '=', taskId)
    .executeTakeFirst()
    .then((row) => row?.dossier_id);
}

// --- The web application's dashboard ----------------------------------------------------------

/**
 * The ids of the caller's pending tasks whose deadline comes first (tasks without one last, then
 * the oldest assigned), at most `limit`. The same participation as the task list (from
 * turns_assignee and turns_role), so it costs what the caller's own pending tasks cost; their
 * rows are then read by primary key (taskRowsQuery).
 */
export function pendingTasksByDeadline(db: Db, scope: TaskScope, limit: number) {
  return pendingTasks(db, scope, {})
    .select('t.id')
    .orderBy(sql`t.expire_at IS NULL`)
    .orderBy('t.expire_at')
    .orderBy('t.assigned_at')
    .orderBy('t.id')
    .limit(limit);
}

/**
 * The caller's own newest history records (approved, rejected, overdue), at most `limit`, with
 * the task's step and dossier. Reads history_actor (actor_user_id, action_at, action,
 * tenant_id, task_id) backwards, then each record's task, step and dossier by primary key.
 */
export function recentHistoryBy(db: Db, scope: TaskScope, limit: number) {
  return db
    .selectFrom('history as h')
    .innerJoin('tasks as t', 't.id', 'h.task_id')
    .innerJoin('process_steps as s', 's.id', 't.step_id')
    .innerJoin('dossiers as d', 'd.id', 'h.dossier_id')
    .select([
      'h.id',
      'h.action',
      'h.action_at',
      'h.comment',
      't.id as task_id',
      's.name as step_name',
      'd.id as folder_id',
      'd.title as document_title',
    ])
    .where('h.actor_user_id', '=', scope.userId)
    .where('h.tenant_id', '=', scope.tenantId)
    .$if(scope.organizationId !== null, (query) =>
      query.where('t.organization_id', '=', scope.organizationId!),
    )
    .orderBy('h.action_at', 'desc')
    .orderBy('h.id', 'desc')
    .limit(limit);
}
