import type { Locale, Messages } from '@esign/shared/messages';
import type { Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { z } from 'zod';
import { originOf } from '../../audit/origin';
import { ensurePermissionOrSigner } from '../../dossiers/scope';
import { DomainError } from '../../errors/domainError';
import { statusOfCode } from '../../http/errorStatuses';
import { type TaskItemValue, TaskListQuery } from '../../tasks/schemas';
import {
  actionableTasks,
  dossierOfTaskFor,
  listTasks,
  taskDetail,
  taskScopeOf,
} from '../../tasks/service';
import {
  type ActionOutcome,
  acknowledge,
  approve,
  commentMaxLength,
  reject,
} from '../../workflow/actions';
import { appBase } from '../assets';
import {
  Badge,
  Card,
  CsrfField,
  DateFact,
  DateTime,
  Fact,
  Notice,
  PageHead,
  Pager,
  Table,
  type Tone,
} from '../components';
import type { Viewer } from '../context';
import { asAppContext, type WebContext, type WebEnv } from '../context';
import {
  DateRangeFields,
  dayRange,
  FilterActions,
  FilterForm,
  KeywordField,
  listParameters,
  MoreFilters,
  RefusedFilter,
} from '../listFilters';
import { renderPage } from '../render';
import {
  DossierStatusBadge,
  dossierPath,
  FileList,
  HistoryTable,
  idOf,
  Progress,
} from './dossiers';
import { notFoundPage as notFound } from './problems';

/**
 * `/xu-ly-cong-viec`: the viewer's tasks, pending or handled, with search; `/xu-ly-cong-viec/{id}`:
 * one task with its documents and history. Approving, rejecting with a reason and acknowledging
 * go through the task actions (workflow/actions.ts), the same the operator CLI's `task approve`
 * uses, from a POST form with the CSRF token; the answer is a redirect to a page with a notice.
 * Signing steps lead to the signing page. `/tasks?id=` is the spec's deep link.
 */

const tasksPath = `${appBase}/xu-ly-cong-viec`;
export const taskPath = (taskId: number) => `${tasksPath}/${taskId}`;
const signingPath = (taskId: number) => `${appBase}/ky-so/${taskId}`;

type Tab = 'pending' | 'handled';

const taskTones: Record<TaskItemValue['status'], Tone> = {
  PENDING: 'warning',
  APPROVED: 'success',
  REJECTED: 'danger',
  EXPIRED: 'neutral',
};

type Verb = 'approve' | 'reject' | 'acknowledge';
const verbPaths: Record<Verb, string> = {
  approve: 'duyet',
  reject: 'tu-choi',
  acknowledge: 'xac-nhan',
};
const doneOf = { approve: 'approved', reject: 'rejected', acknowledge: 'acknowledged' } as const;
type Done = (typeof doneOf)[Verb];
const dones = new Set<string>(Object.values(doneOf));

/** The refusals of the task actions a person can understand and do something about. */
type Problem = keyof Messages['tasks']['problem'];
const problems = new Set<string>([
  'reasonRequired',
  'tooLong',
  'notYourTurn',
  'alreadyHandled',
  'expired',
  'ended',
  'locked',
  'wrongKind',
]);

function problemOf(error: DomainError, text: string): Problem | null {
  switch (error.code) {
    // The actions refuse a text too long, or a rejection without a reason.
    case 'VALIDATION_ERROR':
      return text.trim().length > commentMaxLength ? 'tooLong' : 'reasonRequired';
    case 'NOT_YOUR_TURN':
      return 'notYourTurn';
    case 'TASK_ALREADY_HANDLED':
      return 'alreadyHandled';
    case 'TASK_EXPIRED':
      return 'expired';
    case 'DOSSIER_ENDED':
      return 'ended';
    case 'ACCOUNT_LOCKED':
      return 'locked';
    case 'ACKNOWLEDGE_REQUIRED':
    case 'SIGNATURE_REQUIRED':
    case 'NOT_A_NOTIFICATION_STEP':
      return 'wrongKind';
    default:
      return null;
  }
}

/** What a pending task offers the viewer, by its sign type. */
function offers(signType: TaskItemValue['signType']) {
  return {
    approve: signType === 'app_submit',
    acknowledge: signType === 'notification',
    sign: signType === 'digital_signature' || signType === 'image_signature',
    reject: signType === 'app_submit' || signType === 'notification',
  };
}

/** The notice a page shows after an action (`?done=` or `?problem=`, `&task=` its task). */
const ActionNotice: FC<{ t: Messages; c: WebContext; linkTask: boolean }> = ({
  t,
  c,
  linkTask,
}) => {
  const done = c.req.query('done');
  const problem = c.req.query('problem');
  const task = idOf(c.req.query('task'));
  const dossier = idOf(c.req.query('dossier'));
  if (done !== undefined && dones.has(done)) {
    return (
      <div
        data-task-event={done}
        data-task-id={task ?? undefined}
        data-dossier-id={dossier ?? undefined}
      >
        <Notice tone="success">
          {t.tasks.done[done as Done]}
          {linkTask && task !== null ? (
            <>
              {' '}
              <a href={taskPath(task)} class="notice-link">
                {t.tasks.done.viewTask}
              </a>
            </>
          ) : null}
        </Notice>
      </div>
    );
  }
  if (problem !== undefined && problems.has(problem)) {
    return <Notice tone="danger">{t.tasks.problem[problem as Problem]}</Notice>;
  }
  return null;
};

/** The forms of a task the viewer may act on now, compact (list) or with a comment (page). */
const TaskActions: FC<{
  t: Messages;
  viewer: Viewer;
  task: TaskItemValue;
  back: string;
  compact: boolean;
}> = ({ t, viewer, task, back, compact }) => {
  const texts = t.tasks.actions;
  const offer = offers(task.signType);
  const action = (verb: Verb) => `${taskPath(task.taskId)}/${verbPaths[verb]}`;
  const suffix = `${compact ? 'l' : 'p'}${task.taskId}`;
  return (
    <div class={compact ? 'task-actions task-actions-compact' : 'task-actions'}>
      {offer.sign ? (
        <a class="button button-primary" href={signingPath(task.taskId)}>
          {texts.sign}
        </a>
      ) : null}
      {offer.approve || offer.acknowledge ? (
        <form
          method="post"
          action={action(offer.approve ? 'approve' : 'acknowledge')}
          class={compact ? 'inline-form' : 'form-stack'}
        >
          <CsrfField token={viewer.csrfToken} />
          <input type="hidden" name="back" value={back} />
          {compact ? null : (
            <>
              <label for={`comment-${suffix}`}>{texts.comment}</label>
              <textarea
                id={`comment-${suffix}`}
                name="comment"
                maxlength={commentMaxLength}
                rows={3}
              />
            </>
          )}
          <button type="submit" class="button button-primary">
            {offer.approve ? texts.approve : texts.acknowledge}
          </button>
        </form>
      ) : null}
      {offer.reject ? (
        <details class="reject-box">
          <summary class="button button-danger-outline reject-toggle">{texts.reject}</summary>
          <form
            method="post"
            action={action('reject')}
            class="form-stack"
            data-confirm={texts.rejectConfirm}
          >
            <CsrfField token={viewer.csrfToken} />
            <input type="hidden" name="back" value={back} />
            <label for={`reason-${suffix}`}>{texts.reason}</label>
            <textarea
              id={`reason-${suffix}`}
              name="reason"
              required
              maxlength={commentMaxLength}
              rows={3}
              aria-describedby={`reason-hint-${suffix}`}
            />
            <span id={`reason-hint-${suffix}`} class="hint">
              {texts.reasonHint}
            </span>
            <button type="submit" class="button button-danger">
              {texts.rejectSubmit}
            </button>
          </form>
        </details>
      ) : null}
    </div>
  );
};

const TaskStatusBadge: FC<{ t: Messages; status: TaskItemValue['status'] }> = ({ t, status }) => (
  <Badge tone={taskTones[status]}>{t.tasks.status[status]}</Badge>
);

const TaskRows: FC<{
  t: Messages;
  locale: Locale;
  viewer: Viewer;
  tab: Tab;
  items: TaskItemValue[];
  actionable: Set<number>;
  back: string;
}> = ({ t, locale, viewer, tab, items, actionable, back }) => {
  const columns = t.tasks.list.columns;
  const texts = t.tasks.list;
  return (
    <Table
      wrap="table-wrap card card-flush"
      class="stack task-table"
      labels={[
        columns.task,
        tab === 'pending' ? columns.dates : columns.handled,
        columns.status,
        columns.actions,
      ]}
    >
      {items.map((task) => (
        <tr>
          <td data-label={columns.task} class="cell-main">
            <a href={taskPath(task.taskId)} class="row-title">
              {task.document.documentTitle}
            </a>
            <span class="row-sub">
              {task.stepName} · <span class="muted">{t.tasks.signType[task.signType]}</span>
            </span>
            <span class="muted row-sub">{task.document.documentId || t.dossiers.webCreated}</span>
          </td>
          <td data-label={tab === 'pending' ? columns.dates : columns.handled}>
            {tab === 'pending' ? (
              <span class="dates">
                <span>
                  {texts.expireAt}:{' '}
                  {task.expireAt ? (
                    <DateTime iso={task.expireAt} locale={locale} />
                  ) : (
                    <span class="muted">{texts.noDeadline}</span>
                  )}
                </span>
                <span class="muted">
                  {texts.assignedAt}: <DateTime iso={task.assignedAt} locale={locale} />
                </span>
              </span>
            ) : (
              <span class="dates">
                <span>
                  {texts.actionAt}: <DateTime iso={task.actionAt} locale={locale} />
                </span>
                {task.comment ? <span class="muted comment">“{task.comment}”</span> : null}
              </span>
            )}
          </td>
          <td data-label={columns.status}>
            <TaskStatusBadge t={t} status={task.status} />
          </td>
          <td data-label={columns.actions} class="cell-actions">
            {task.status !== 'PENDING' ? (
              <a href={taskPath(task.taskId)}>{t.tasks.done.viewTask}</a>
            ) : actionable.has(task.taskId) ? (
              <TaskActions t={t} viewer={viewer} task={task} back={back} compact />
            ) : (
              <span class="muted">{texts.waitingOthers}</span>
            )}
          </td>
        </tr>
      ))}
    </Table>
  );
};

const listNames = ['tab', 'keyword', 'fromDate', 'toDate', 'page', 'pageSize'];

async function listPage(c: WebContext): Promise<Response> {
  const viewer = c.get('viewer')!;
  const deps = c.get('deps');
  const t = c.get('t');
  const locale = c.get('locale');
  await ensurePermissionOrSigner(deps, viewer.principal, 'task:view');
  const query = listParameters(c, listNames);
  const tab: Tab = query.tab === 'handled' ? 'handled' : 'pending';
  const parsed = TaskListQuery.safeParse({
    status: tab === 'pending' ? 'pending' : 'completed',
    keyword: query.keyword,
    page: query.page,
    pageSize: query.pageSize,
    ...dayRange(query),
  });
  const scope = await taskScopeOf(deps, viewer.principal);
  const result = parsed.success ? await listTasks(deps, scope, parsed.data) : null;
  const actionable =
    result && tab === 'pending'
      ? await actionableTasks(
          deps,
          scope,
          result.items.map((item) => item.taskId),
        )
      : new Set<number>();
  const texts = t.tasks.list;
  const here = new URL(c.req.url);
  const back = `${here.pathname}${here.search}`;
  const tabLink = (target: Tab) => {
    const params = new URLSearchParams();
    if (target === 'handled') params.set('tab', 'handled');
    if (query.keyword) params.set('keyword', query.keyword);
    const search = params.toString();
    return search ? `${tasksPath}?${search}` : tasksPath;
  };
  const filtered = ['keyword', 'fromDate', 'toDate'].some((name) => query[name] !== undefined);
  const more = query.fromDate !== undefined || query.toDate !== undefined;
  return renderPage(
    c,
    { title: texts.title, active: 'tasks', status: parsed.success ? 200 : 400 },
    <section>
      <PageHead title={texts.title} intro={texts.intro} />
      <ActionNotice t={t} c={c} linkTask />
      <nav class="tabs" aria-label={texts.tabs.label}>
        {(['pending', 'handled'] as const).map((target) => (
          <a href={tabLink(target)} aria-current={tab === target ? 'page' : undefined}>
            {texts.tabs[target]}
            {tab === target && result ? <span class="tab-count">{result.total}</span> : null}
          </a>
        ))}
      </nav>
      <FilterForm action={tasksPath} query={query}>
        {tab === 'handled' ? <input type="hidden" name="tab" value="handled" /> : null}
        <div class="filter-row">
          <KeywordField label={texts.keyword} hint={texts.keywordHint} value={query.keyword} />
          <FilterActions t={t} clear={tabLink(tab)} />
        </div>
        <MoreFilters label={texts.moreFilters} open={more}>
          <p class="hint">{tab === 'pending' ? texts.dateHintPending : texts.dateHintHandled}</p>
          <div class="filters">
            <DateRangeFields fromLabel={texts.fromDate} toLabel={texts.toDate} query={query} />
          </div>
        </MoreFilters>
      </FilterForm>
      {parsed.success ? null : <RefusedFilter t={t} error={parsed.error} texts={texts} />}
      {result && result.items.length > 0 ? (
        <>
          <TaskRows
            t={t}
            locale={locale}
            viewer={viewer}
            tab={tab}
            items={result.items}
            actionable={actionable}
            back={back}
          />
          <Pager
            t={t}
            page={result.page}
            pageSize={result.pageSize}
            total={result.total}
            path={tasksPath}
            query={query}
          />
        </>
      ) : result ? (
        <p class="card empty">
          {filtered
            ? texts.emptyFiltered
            : tab === 'pending'
              ? texts.emptyPending
              : texts.emptyHandled}
        </p>
      ) : null}
    </section>,
  );
}

async function detailPage(c: WebContext, taskId: number): Promise<Response> {
  const viewer = c.get('viewer')!;
  const deps = c.get('deps');
  const t = c.get('t');
  const locale = c.get('locale');
  await ensurePermissionOrSigner(deps, viewer.principal, 'task:view');
  const scope = await taskScopeOf(deps, viewer.principal);
  const task = await taskDetail(deps, scope, { id: taskId });
  const actionable = (await actionableTasks(deps, scope, [taskId])).has(taskId);
  const texts = t.tasks.detail;
  const actions = t.tasks.actions;
  const offer = offers(task.signType);
  const assignee = task.assignee;
  const assigneeText = [
    assignee.name ?? assignee.username,
    assignee.roleName,
    assignee.email,
    assignee.phone,
  ]
    .filter((part) => part !== undefined && part !== '')
    .join(' · ');
  return renderPage(
    c,
    {
      title: `${task.stepName} · ${task.document.documentTitle}`,
      active: 'tasks',
      scripts: ['preview.js'],
    },
    <section>
      <nav class="breadcrumb" aria-label={t.dossiers.detail.breadcrumbLabel}>
        <a href={tasksPath}>{texts.breadcrumb}</a>
      </nav>
      <PageHead
        title={task.document.documentTitle}
        intro={`${task.stepName} · ${t.tasks.signType[task.signType]}`}
      >
        <TaskStatusBadge t={t} status={task.status} />
      </PageHead>
      <ActionNotice t={t} c={c} linkTask={false} />
      <div class="detail-grid">
        <div class="detail-main">
          <Card id="act" title={actions.title} class="action-card">
            {actionable ? (
              <>
                <p class="muted">
                  {offer.sign
                    ? actions.signIntro
                    : offer.acknowledge
                      ? actions.acknowledgeIntro
                      : actions.approveIntro}
                </p>
                <TaskActions
                  t={t}
                  viewer={viewer}
                  task={task}
                  back={taskPath(task.taskId)}
                  compact={false}
                />
              </>
            ) : (
              <p class="muted">
                {task.status === 'PENDING' ? actions.notActionable : actions.handled}
              </p>
            )}
          </Card>
          <Card id="files" title={t.dossiers.files.title}>
            <FileList
              t={t}
              locale={locale}
              folderId={task.document.folderId}
              files={task.files}
              attachments={task.attachments}
            />
          </Card>
        </div>
        <aside class="detail-side">
          <Card id="facts" title={texts.facts}>
            <dl class="facts facts-single">
              <Fact label={texts.dossier}>
                <a href={dossierPath(task.document.folderId)}>{task.document.documentTitle}</a>{' '}
                <DossierStatusBadge t={t} status={task.document.status} />
              </Fact>
              {task.document.documentId ? (
                <Fact label={texts.documentId}>{task.document.documentId}</Fact>
              ) : null}
              <Fact label={texts.step}>{task.stepName}</Fact>
              <Fact label={texts.signType}>{t.tasks.signType[task.signType]}</Fact>
              {assigneeText ? <Fact label={texts.assignee}>{assigneeText}</Fact> : null}
              <DateFact label={texts.assignedAt} iso={task.assignedAt} locale={locale} />
              <Fact label={texts.expireAt}>
                {task.expireAt ? (
                  <DateTime iso={task.expireAt} locale={locale} />
                ) : (
                  <span class="muted">{t.tasks.list.noDeadline}</span>
                )}
              </Fact>
              <DateFact label={texts.actionAt} iso={task.actionAt} locale={locale} optional />
              {task.comment ? <Fact label={texts.comment}>{task.comment}</Fact> : null}
              <Fact label={texts.progress}>
                <Progress
                  t={t}
                  signed={task.document.signedCount}
                  required={task.document.requiredCount}
                />
              </Fact>
            </dl>
            <p>
              <a class="button button-secondary" href={dossierPath(task.document.folderId)}>
                {texts.openDossier}
              </a>
            </p>
          </Card>
          <Card id="history" title={texts.history}>
            <HistoryTable t={t} locale={locale} items={task.history} empty={texts.noHistory} />
          </Card>
        </aside>
      </div>
    </section>,
  );
}

const ActionForm = z.object({
  comment: z.string().max(100_000).optional(),
  reason: z.string().max(100_000).optional(),
  back: z.string().max(2048).optional(),
});

/** The pages an action may come back to: the task list (with its query) or a task's page. */
const backPattern = new RegExp(`^${tasksPath}(/\\d+)?(\\?[^\\\\#]*)?$`);

/** Where an action's answer leads: the list or task page it came from, with `params` set. */
function backTo(back: string | undefined, taskId: number, params: Record<string, string>): string {
  const target = back !== undefined && backPattern.test(back) ? back : taskPath(taskId);
  const url = new URL(target, 'http://page.invalid');
  for (const name of ['done', 'problem', 'task', 'dossier']) url.searchParams.delete(name);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return `${url.pathname}${url.search}`;
}

/** One task action from a form: performed as the viewer, then back with a notice. */
function actionRoute(verb: Verb) {
  return async (c: WebContext) => {
    const taskId = idOf(c.req.param('id'));
    if (taskId === null) return notFound(c);
    const viewer = c.get('viewer')!;
    const deps = c.get('deps');
    await ensurePermissionOrSigner(deps, viewer.principal, 'task:view');
    const form = ActionForm.safeParse(await c.req.parseBody());
    const fields = form.success ? form.data : {};
    // The task must be one the viewer may see, as on its page (else "not found").
    const task = await taskDetail(deps, await taskScopeOf(deps, viewer.principal), { id: taskId });
    const back = (params: Record<string, string>) =>
      c.redirect(
        backTo(fields.back, taskId, {
          ...params,
          task: String(taskId),
          dossier: String(task.document.folderId),
        }),
        303,
      );
    // A signature step is signed on the signing page (which draws the signature), never approved here.
    if (verb === 'approve' && !offers(task.signType).approve) return back({ problem: 'wrongKind' });
    const input = { taskCode: task.taskCode, actorUserId: viewer.actor.id };
    let outcome: ActionOutcome;
    try {
      outcome =
        verb === 'reject'
          ? await reject(deps, {
              ...input,
              reason: fields.reason ?? '',
              origin: originOf(asAppContext(c)),
            })
          : await (verb === 'approve' ? approve : acknowledge)(deps, {
              ...input,
              comment: fields.comment,
            });
    } catch (error) {
      const text = (verb === 'reject' ? fields.reason : fields.comment) ?? '';
      const problem = error instanceof DomainError ? problemOf(error, text) : null;
      if (problem === null || (c.req.header('accept') ?? '').includes('application/json')) {
        throw error;
      }
      return back({ problem });
    }
    if ((c.req.header('accept') ?? '').includes('application/json')) {
      return c.json({ done: doneOf[verb], taskId, ...outcome });
    }
    return back({ done: doneOf[verb] });
  };
}

export function taskPages(app: Hono<WebEnv>): void {
  app.get('/xu-ly-cong-viec', (c) => listPage(c));
  app.get('/xu-ly-cong-viec/:id', (c) => {
    const id = idOf(c.req.param('id'));
    return id === null ? notFound(c) : detailPage(c, id);
  });
  for (const verb of ['approve', 'reject', 'acknowledge'] as const) {
    app.post(`/xu-ly-cong-viec/:id/${verbPaths[verb]}`, actionRoute(verb));
  }

  // The spec's deep link (e-mails carry it): the task's page, or its dossier's for someone
  // who may see the dossier but not the task (told of a rejection in another step).
  app.get('/tasks', async (c) => {
    const id = idOf(c.req.query('id'));
    if (id === null) return notFound(c);
    const viewer = c.get('viewer')!;
    const deps = c.get('deps');
    try {
      await ensurePermissionOrSigner(deps, viewer.principal, 'task:view');
      await taskDetail(deps, await taskScopeOf(deps, viewer.principal), { id });
      return c.redirect(taskPath(id), 303);
    } catch (error) {
      if (!(error instanceof DomainError) || ![403, 404].includes(statusOfCode(error.code))) {
        throw error;
      }
    }
    await ensurePermissionOrSigner(deps, viewer.principal, 'document:view');
    return c.redirect(dossierPath(await dossierOfTaskFor(deps, viewer.principal, id)), 303);
  });
}
