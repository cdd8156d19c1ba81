import { findUserById } from '../auth/queries';
import type { AppDeps, Principal } from '../context';
import type { HistoryAction } from '../db/schema';
import { fileItems } from '../dossiers/fileItems';
import { dossierIdentity } from '../dossiers/identity';
import { openStepsOf, scopedDossierById } from '../dossiers/queries';
import { dossierByDocumentId, dossierInScopeById, scopeOf } from '../dossiers/scope';
import { DomainError } from '../errors/domainError';
import { taskStatusNames } from '../workflow/actions';
import {
  isInternalAccountStep,
  loadTaskContext,
  mayPerform,
  participantAt,
  type TurnRow,
  takesPart,
} from '../workflow/taskContext';
import {
  activeTurnsOf,
  countQuery,
  dossierIdOfTask,
  filtersDossiers,
  type HistoryRow,
  handledTurns,
  historyRows,
  listPage,
  pendingTasks,
  roleLabel,
  rowsOfKeys,
  type TaskListRow,
  type TaskRow,
  type TaskScope,
  taskRowById,
  waitingCountQuery,
  waitingPageQuery,
} from './queries';
import {
  type AssigneeValue,
  type HistoryItemValue,
  type TaskItemValue,
  type TaskListFilter,
  taskPageSize,
} from './schemas';

type TaskDeps = Pick<AppDeps, 'db' | 'clock' | 'config' | 'secrets'>;

/** Handled records each `status` of the list asks for (pending records: only pending and all). */
const handledActions: Record<NonNullable<TaskListFilter['status']>, HistoryAction[]> = {
  pending: [],
  approved: ['NEXT'],
  rejected: ['REJECT'],
  expired: ['OVERDUE'],
  completed: ['NEXT', 'REJECT', 'OVERDUE'],
  all: ['NEXT', 'REJECT', 'OVERDUE'],
};

const actionStatus = { NEXT: 'APPROVED', REJECT: 'REJECTED', OVERDUE: 'EXPIRED' } as const;

/**
 * The caller of the task endpoints: the API key's bound user in the key's organization, or the
 * token's user in its tenant, with the roles it holds and the delegations in force to it.
 */
export async function taskScopeOf(deps: TaskDeps, principal: Principal): Promise<TaskScope> {
  const scope = await scopeOf(deps.db, principal);
  const participant = await participantAt(deps.db, scope.userId, deps.clock.now().toISOString());
  return { ...participant, tenantId: scope.tenantId, organizationId: scope.organizationId };
}

/** Keeps the keys whose value is present: the spec omits fields without a value. */
function present<T extends Record<string, unknown>>(
  fields: T,
): { [K in keyof T]?: NonNullable<T[K]> } {
  return Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== null && value !== undefined),
  ) as { [K in keyof T]?: NonNullable<T[K]> };
}

/** What the item says was done: a recorded action, or (action null) the task's own outcome. */
interface Handling {
  action: HistoryAction | null;
  actionAt: string | null;
  comment: string | null;
}

/**
 * The spec's task item. A recorded action decides the status (NEXT → APPROVED, REJECT →
 * REJECTED, OVERDUE → EXPIRED); without one the task status does (1 PENDING, 2 APPROVED,
 * 3 REJECTED, 4 EXPIRED). `actionAt` and `comment` come with the handling, if any.
 */
function toTaskItem(row: TaskRow, handling: Handling | null): TaskItemValue {
  return {
    taskId: row.task_id,
    taskCode: row.task_code,
    stepCode: row.step_code,
    stepName: row.step_name,
    signType: row.sign_type,
    status: handling?.action ? actionStatus[handling.action] : taskStatusNames[row.task_status]!,
    assignedAt: row.assigned_at,
    ...present({
      expireAt: row.expire_at,
      actionAt: handling?.actionAt,
      comment: handling?.comment,
    }),
    document: {
      folderId: row.folder_id,
      documentId: row.document_id ?? '',
      documentUuid: row.document_uuid,
      documentTitle: row.document_title,
      ...present({ transactionId: row.transaction_id, ecmClassCode: row.ecm_class_code }),
      status: row.dossier_status,
      requiredCount: row.required_count,
      signedCount: row.signed_count,
      createdAt: row.document_created_at,
    },
  };
}

function listItem(row: TaskListRow): TaskItemValue {
  return toTaskItem(
    row,
    row.action === null
      ? null
      : { action: row.action, actionAt: row.action_at, comment: row.comment },
  );
}

/**
 * Endpoint 6. Pending records are tasks; handled records are the caller's turns (history rows),
 * so a multi-signer step the caller signed while another signer is pending appears twice.
 * `total` counts every match; `all` merges both kinds newest first (actionAt or assignedAt).
 */
export async function listTasks(deps: TaskDeps, scope: TaskScope, filter: TaskListFilter) {
  const status = filter.status ?? 'all';
  const paging = { page: filter.page ?? 1, pageSize: filter.pageSize ?? taskPageSize.default };
  const actions = handledActions[status];
  const pending =
    status === 'pending' || status === 'all' ? pendingTasks(deps.db, scope, filter) : null;
  const handled = actions.length > 0 ? handledTurns(deps.db, scope, filter, actions) : null;
  // Without documentId or keyword the pending records are counted and paged from the
  // waiting-turn index alone (migration 027).
  const fromIndex = !filtersDossiers(filter);
  let total = 0;
  for (const query of [pending, handled]) {
    if (!query) continue;
    const counted =
      query === pending && fromIndex
        ? waitingCountQuery(deps.db, scope, filter)
        : countQuery(query);
    total += Number((await counted.executeTakeFirstOrThrow()).total);
  }
  let rows: TaskListRow[] = [];
  if (total > 0 && fromIndex && handled === null) {
    rows = await rowsOfKeys(
      deps.db,
      await waitingPageQuery(deps.db, scope, filter, paging).execute(),
    );
  } else if (total > 0) {
    rows = await listPage(deps.db, pending, handled, paging);
  }
  return { items: rows.map(listItem), page: paging.page, pageSize: paging.pageSize, total };
}

/** A task by its code (the API) or its numeric id (the web app's pages and deep links). */
export type TaskKey = { code: string } | { id: number };

function taskNotFound(key: TaskKey): DomainError {
  return 'code' in key
    ? new DomainError('TASK_NOT_FOUND', `No task ${key.code}`, { field: 'taskCode' })
    : new DomainError('TASK_NOT_FOUND', `No task ${key.id}`, { field: 'taskId' });
}

export function toHistoryItem(row: HistoryRow): HistoryItemValue {
  return {
    taskId: row.task_id,
    taskCode: row.task_code,
    stepCode: row.step_code,
    stepName: row.step_name,
    action: row.action,
    actionLabel: row.action_label,
    actionAt: row.action_at,
    ...present({
      comment: row.comment,
      actorName: row.actor_name,
      actorUsername: isInternalAccountStep(row.step_kind) ? row.actor_username : null,
      actorEmail: row.actor_email,
      actorPhone: row.actor_phone,
    }),
  };
}

/**
 * `assignee` of the task detail, by step kind: a guest as submitted (email, phone,
 * identityNumber, taxCode; never a username, which is their personal id); an internal user's
 * username, name, email, phone; a role step's roleCode and roleName, plus the user once taken.
 */
async function assigneeOf(
  deps: TaskDeps,
  kind: string,
  stepRoleId: number | null,
  turn: TurnRow | undefined,
): Promise<AssigneeValue> {
  if (!turn) return {};
  if (kind === 'guest' || kind === 'phone_guest') {
    return present({
      email: turn.signer_email,
      phone: turn.signer_phone,
      identityNumber: turn.signer_identity_number,
      taxCode: turn.signer_tax_code,
    });
  }
  const user =
    turn.assignee_user_id === null ? undefined : await findUserById(deps.db, turn.assignee_user_id);
  const person = user
    ? present({ username: user.username, name: user.name, email: user.email, phone: user.phone })
    : {};
  if (kind !== 'role') return person;
  const roleId = turn.role_id ?? stepRoleId;
  const role = roleId === null ? undefined : await roleLabel(deps.db, roleId);
  return { ...(role ? { roleCode: role.code, roleName: role.name } : {}), ...person };
}

/**
 * Endpoint 7: the task item, its assignee, the dossier's files and the history of this task.
 * Visible to whoever takes part in it (assignee, holder of an untaken role turn, performer of a
 * turn, or a delegate while the task is pending), in the caller's tenant and, with an
 * organization key, the key's organization; anything else is 404.
 *
 * The item speaks for the caller: their own latest record on the task decides status, actionAt
 * and comment; without one the task's status (and its action time and comment once handled).
 * `assignee` is the caller's own turn when they have one, else the turn due now, else the first.
 */
export async function taskDetail(deps: TaskDeps, scope: TaskScope, key: TaskKey) {
  const context = await loadTaskContext(deps.db, key);
  if (
    !context ||
    context.task.tenantId !== scope.tenantId ||
    (scope.organizationId !== null && context.task.organizationId !== scope.organizationId)
  ) {
    throw taskNotFound(key);
  }
  // Delegation applies only to pending items.
  const participant = context.task.status === 1 ? scope : { ...scope, delegatorIds: [] };
  if (!takesPart(participant, context.turns)) throw taskNotFound(key);

  const row = await taskRowById(deps.db, context.task.id);
  const history = await historyRows(deps.db, { taskId: context.task.id });
  const own = history.filter((record) => record.actor_user_id === scope.userId).at(-1);
  const item = toTaskItem(
    row,
    own
      ? { action: own.action, actionAt: own.action_at, comment: own.comment }
      : row.task_status === 1
        ? null
        : { action: null, actionAt: row.task_action_at, comment: row.task_comment },
  );
  const mine = context.turns.filter(
    (turn) => mayPerform(participant, turn) || turn.acted_by_user_id === scope.userId,
  );
  const concerned =
    mine.find((turn) => turn.status === 'ACTIVE') ??
    mine.at(-1) ??
    context.turns.find((turn) => turn.status === 'ACTIVE') ??
    context.turns[0];
  const files = await fileItems(deps, context.dossier.id, { detailed: true });
  return {
    ...item,
    assignee: await assigneeOf(deps, context.step.kind, context.step.role_id, concerned),
    files: files.files,
    attachments: files.attachments,
    history: history.map(toHistoryItem),
  };
}

/**
 * Endpoint 8: every history record of a dossier in ascending time, with the dossier's state.
 * The dossier must be in the caller's scope (dossiers/scope.ts: an organization key sees its
 * organization; a user sees its organizations' dossiers and those it takes part in, an outside
 * signer only the latter); otherwise 404.
 */
export async function dossierHistory(
  deps: TaskDeps,
  principal: Principal,
  key: { documentId: string } | { folderId: number },
) {
  const scope = await scopeOf(deps.db, principal);
  const dossier =
    'documentId' in key
      ? await dossierByDocumentId(deps.db, scope, key.documentId)
      : await dossierInScopeById(deps.db, scope, key.folderId);
  const history = await historyRows(deps.db, { dossierId: dossier.id });
  return {
    ...dossierIdentity(dossier),
    status: dossier.status,
    requiredCount: dossier.required_count,
    signedCount: dossier.signed_count,
    history: history.map(toHistoryItem),
  };
}

/**
 * Which of these tasks the caller may perform now: the task waits and its ACTIVE turn is the
 * caller's (assignee, holder of its untaken role, or a delegate of its assignee), as the task
 * actions decide (workflow/actions.ts). A list shows its action buttons on these only.
 */
export async function actionableTasks(
  deps: TaskDeps,
  scope: TaskScope,
  taskIds: number[],
): Promise<Set<number>> {
  const turns = await activeTurnsOf(deps.db, taskIds);
  return new Set(
    turns.filter((turn) => mayPerform(scope, turn)).map((turn) => turn.task_id as number),
  );
}

/**
 * Where a deep link to a task leads someone who may not see the task itself (a participant of
 * another step told of a rejection): the task's dossier when the caller may see that, else
 * nothing (404 as for an unknown task).
 */
export async function dossierOfTaskFor(
  deps: TaskDeps,
  principal: Principal,
  taskId: number,
): Promise<number> {
  const dossierId = await dossierIdOfTask(deps.db, taskId);
  if (dossierId === undefined) throw taskNotFound({ id: taskId });
  const dossier = await scopedDossierById(deps.db, await scopeOf(deps.db, principal), dossierId);
  if (!dossier) throw taskNotFound({ id: taskId });
  return dossier.id;
}

/** The open task of a dossier that the caller may perform now, if any (its id). */
export async function actionableTaskOf(
  deps: TaskDeps,
  principal: Principal,
  dossierId: number,
): Promise<number | null> {
  const open = await openStepsOf(deps.db, [dossierId]);
  if (open.length === 0) return null;
  const scope = await taskScopeOf(deps, principal);
  const mine = await actionableTasks(
    deps,
    scope,
    open.map((step) => step.task_id),
  );
  return open.find((step) => mine.has(step.task_id))?.task_id ?? null;
}
