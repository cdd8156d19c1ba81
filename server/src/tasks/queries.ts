import { type ExpressionBuilder, sql } from 'kysely';
import type { Db } from '../db/database';
import type {
  Database,
  DossierStatus,
  DossiersTable,
  HistoryAction,
  ProcessStepsTable,
  SignType,
  TasksTable,
} from '../db/schema';
import { searchMatches } from '../directory/search';
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

/** One record of the task list: a pending task (no action) or a handled turn (a history row). */
export interface TaskListRow {
  kind: 'pending' | 'handled';
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
  action: HistoryAction | null;
  action_at: string | null;
  comment: string | null;
  /** assignedAt of a pending record, actionAt of a handled one: the list's order. */
  sort_at: string;
  sort_id: number;
}

type Joined = Database & { t: TasksTable; d: DossiersTable; s: ProcessStepsTable };

/** Columns of a task, its step and its dossier, for queries that alias them t, s and d. */
const taskColumns = [
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
] as const;

/** `documentId` and `keyword` (dossier title or step name, folded like migration 004's keys). */
function dossierFilters(filter: TaskRowFilter) {
  return (eb: ExpressionBuilder<Joined, 'd' | 's'>) => {
    const conditions = [];
    if (filter.documentId !== undefined) {
      conditions.push(eb('d.document_id', '=', filter.documentId));
    }
    if (filter.keyword !== undefined) {
      conditions.push(
        eb.or([
          searchMatches('d.search_key', filter.keyword),
          searchMatches('s.search_key', filter.keyword),
        ]),
      );
    }
    return eb.and(conditions);
  };
}

/** Tasks with their dossier (d) and step (s). */
function joinedTasks(db: Db) {
  return db
    .selectFrom('tasks as t')
    .innerJoin('dossiers as d', 'd.id', 't.dossier_id')
    .innerJoin('process_steps as s', 's.id', 't.step_id');
}

/**
 * Tasks waiting (status 1) in which the caller takes part: the assignee of one of its turns (or
 * of a user who delegated to the caller), or a holder of the role of a turn nobody has taken.
 * Starts from the caller's turns (turns_assignee, turns_role), so the cost follows the caller's
 * own tasks, not the size of the table. `fromDate`/`toDate` bound assignedAt.
 */
export function pendingTasks(db: Db, scope: TaskScope, filter: TaskRowFilter) {
  const assignees = [scope.userId, ...scope.delegatorIds];
  const participation = (eb: ExpressionBuilder<Joined, 't'>) => {
    const assigned = eb
      .selectFrom('turns as p')
      .select('p.task_id')
      .where('p.assignee_user_id', 'in', assignees)
      .where('p.task_id', 'is not', null);
    const byRole = eb
      .selectFrom('turns as r')
      .select('r.task_id')
      .where('r.role_id', 'in', scope.roleIds)
      .where('r.assignee_user_id', 'is', null)
      .where('r.task_id', 'is not', null);
    const taskIds = scope.roleIds.length > 0 ? assigned.union(byRole) : assigned;
    return eb('t.id', 'in', taskIds.$narrowType<{ task_id: number }>());
  };
  return joinedTasks(db)
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
    .innerJoin('dossiers as d', 'd.id', 'h.dossier_id')
    .innerJoin('process_steps as s', 's.id', 't.step_id')
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

export type PendingQuery = ReturnType<typeof joinedTasks>;
export type HandledQuery = ReturnType<typeof handledTurns>;

export function pendingRows(query: PendingQuery) {
  return query
    .select(taskColumns)
    .select([
      sql<'pending'>`'pending'`.as('kind'),
      sql<HistoryAction | null>`NULL`.as('action'),
      sql<string | null>`NULL`.as('action_at'),
      sql<string | null>`NULL`.as('comment'),
      't.assigned_at as sort_at',
      't.id as sort_id',
    ])
    .$castTo<TaskListRow>();
}

export function handledRows(query: HandledQuery) {
  return query
    .select(taskColumns)
    .select([
      sql<'handled'>`'handled'`.as('kind'),
      'h.action as action',
      'h.action_at as action_at',
      'h.comment as comment',
      'h.action_at as sort_at',
      'h.id as sort_id',
    ])
    .$castTo<TaskListRow>();
}

/** The number of matches of a pending or handled query. */
export function countQuery(query: PendingQuery | HandledQuery) {
  return (query as PendingQuery).select(sql<number>`count(*)`.as('total'));
}

export interface Paging {
  page: number;
  pageSize: number;
}

/** One page of pending records, handled records or both merged, newest first. */
export function pageQuery(
  db: Db,
  pending: PendingQuery | null,
  handled: HandledQuery | null,
  paging: Paging,
) {
  const offset = (paging.page - 1) * paging.pageSize;
  const rows =
    pending && handled
      ? pendingRows(pending).unionAll(handledRows(handled))
      : pending
        ? pendingRows(pending)
        : handledRows(handled!);
  return db
    .selectFrom(rows.as('items'))
    .selectAll()
    .orderBy('sort_at', 'desc')
    .orderBy('kind')
    .orderBy('sort_id', 'desc')
    .limit(paging.pageSize)
    .offset(offset);
}

/** One task as a list row (no action), for the task detail. */
export function taskRowById(db: Db, taskId: number): Promise<TaskListRow> {
  return pendingRows(joinedTasks(db).where('t.id', '=', taskId)).executeTakeFirstOrThrow();
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
