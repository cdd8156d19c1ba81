import type { Locale, Messages } from '@esign/shared/messages';
import type { Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { contractReaders } from '../../contracts/access';
import { contractsWaitingForOthers, recentContractActivity } from '../../contracts/overview';
import { dossierCountCap, dossierCounts } from '../../dossiers/counts';
import { ensurePermissionOrSigner } from '../../dossiers/scope';
import { DomainError } from '../../errors/domainError';
import { statusOfCode } from '../../http/errorStatuses';
import { recentTaskActivity, upcomingTasks } from '../../tasks/upcoming';
import { appBase } from '../assets';
import { Badge, DateTime } from '../components';
import type { WebContext, WebEnv } from '../context';
import { renderPage } from '../render';
import { contractCallerOf, contractPath } from './contracts';

/** How many rows each list of the dashboard shows; the full lists are one link away. */
const shown = { tasks: 8, contracts: 6, activity: 10 } as const;

/** A task is "due soon" when its deadline falls within this many hours. */
const dueSoonHours = 24;

/**
 * Runs a part of the dashboard only for someone the API would answer: a refusal (403: no
 * permission, or an account outside any tenant) leaves the part out instead of failing the page.
 */
async function ifAllowed<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof DomainError && statusOfCode(error.code) === 403) return null;
    throw error;
  }
}

type Tasks = Awaited<ReturnType<typeof upcomingTasks>>;
type Counts = Awaited<ReturnType<typeof dossierCounts>>;
type Waiting = Awaited<ReturnType<typeof contractsWaitingForOthers>>;

interface Activity {
  at: string;
  label: string;
  subject: string;
  href: string;
}

/** The task and dossier pages (web/pages/tasks.tsx and dossiers.tsx) take the numeric ids. */
const taskLink = (taskId: number) => `${appBase}/xu-ly-cong-viec/${taskId}`;
const dossierLink = (folderId: number) => `${appBase}/ho-so/${folderId}`;

const SectionHead: FC<{ id: string; title: string; count?: string; intro: string }> = (props) => (
  <div class="section-head">
    <h2 id={props.id}>
      {props.title}
      {props.count ? <span class="count-pill">{props.count}</span> : null}
    </h2>
    <p class="muted">{props.intro}</p>
  </div>
);

const TaskCard: FC<{ t: Messages; locale: Locale; tasks: Tasks; now: Date }> = ({
  t,
  locale,
  tasks,
  now,
}) => {
  const d = t.dashboard.tasks;
  const soon = now.getTime() + dueSoonHours * 3_600_000;
  return (
    <section class="card dash-card dash-tasks" aria-labelledby="dash-tasks">
      <SectionHead id="dash-tasks" title={d.title} count={d.count(tasks.total)} intro={d.intro} />
      {tasks.items.length === 0 ? (
        <p class="empty">{d.empty}</p>
      ) : (
        <ul class="task-list">
          {tasks.items.map((task) => {
            const due = task.expireAt === null ? null : Date.parse(task.expireAt);
            return (
              <li class="task-item">
                <div class="task-main">
                  <a href={taskLink(task.taskId)} class="task-title">
                    {task.documentTitle}
                  </a>
                  <span class="muted">
                    {task.stepName} · {t.tasks.signType[task.signType]}
                  </span>
                </div>
                <div class="task-due">
                  {due === null ? (
                    <span class="muted">{d.noDeadline}</span>
                  ) : (
                    <>
                      <DateTime iso={task.expireAt} locale={locale} />
                      {due < now.getTime() ? (
                        <Badge tone="danger">{d.overdue}</Badge>
                      ) : due < soon ? (
                        <Badge tone="warning">{d.dueSoon}</Badge>
                      ) : null}
                    </>
                  )}
                </div>
                <a
                  class="button button-primary button-small"
                  href={taskLink(task.taskId)}
                  aria-label={d.openFor(task.documentTitle)}
                >
                  {d.open}
                </a>
              </li>
            );
          })}
        </ul>
      )}
      <p class="card-foot">
        <a href={`${appBase}/xu-ly-cong-viec`}>{d.all}</a>
      </p>
    </section>
  );
};

const DossierCard: FC<{ t: Messages; counts: Counts }> = ({ t, counts }) => {
  const d = t.dashboard.dossiers;
  return (
    <section class="card dash-card dash-dossiers" aria-labelledby="dash-dossiers">
      <SectionHead id="dash-dossiers" title={d.title} intro={d.intro} />
      <ul class="status-tiles">
        {counts.map(({ status, count }) => {
          const shownCount = count >= dossierCountCap ? d.atLeast(dossierCountCap) : String(count);
          return (
            <li>
              <a
                class={`status-tile status-${status.toLowerCase()}`}
                href={`${appBase}/ho-so?status=${status}`}
              >
                <span class="tile-count">{shownCount}</span>
                <span class="tile-label">{t.dossiers.status[status]}</span>
              </a>
            </li>
          );
        })}
      </ul>
      <p class="card-foot">
        <a href={`${appBase}/ho-so`}>{d.all}</a>
      </p>
    </section>
  );
};

const ContractCard: FC<{ t: Messages; locale: Locale; waiting: Waiting }> = ({
  t,
  locale,
  waiting,
}) => {
  const d = t.dashboard.contracts;
  return (
    <section class="card dash-card dash-contracts" aria-labelledby="dash-contracts">
      <SectionHead
        id="dash-contracts"
        title={d.title}
        count={d.count(waiting.total)}
        intro={d.intro}
      />
      {waiting.items.length === 0 ? (
        <p class="empty">{d.empty}</p>
      ) : (
        <ul class="waiting-list">
          {waiting.items.map((contract) => (
            <li class="waiting-item">
              <div class="waiting-main">
                <a href={contractPath(contract.id)} class="task-title">
                  {contract.title}
                </a>
                {contract.waitingFor.length > 0 ? (
                  <span class="muted">{d.waitingFor(contract.waitingFor.join(', '))}</span>
                ) : null}
              </div>
              <div class="waiting-side">
                <Badge tone="info">{d.progress(contract.signed, contract.signers)}</Badge>
                <span class="muted waiting-deadline">
                  {d.deadline}: <DateTime iso={contract.expiredAt} locale={locale} />
                </span>
              </div>
            </li>
          ))}
        </ul>
      )}
      <p class="card-foot">
        <a href={`${appBase}/hop-dong?status=signing`}>{d.all}</a>
      </p>
    </section>
  );
};

const ActivityCard: FC<{ t: Messages; locale: Locale; items: Activity[] }> = ({
  t,
  locale,
  items,
}) => {
  const d = t.dashboard.activity;
  return (
    <section class="card dash-card dash-activity" aria-labelledby="dash-activity">
      <SectionHead id="dash-activity" title={d.title} intro={d.intro} />
      {items.length === 0 ? (
        <p class="empty">{d.empty}</p>
      ) : (
        <ol class="activity">
          {items.map((item) => (
            <li>
              <DateTime iso={item.at} locale={locale} />
              <span class="activity-what">
                <strong>{item.label}</strong> <a href={item.href}>{item.subject}</a>
              </span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
};

/** The viewer's own acts, dossier steps and contracts together, newest first. */
async function recentActivity(c: WebContext): Promise<Activity[] | null> {
  const t = c.get('t').dashboard.activity;
  const deps = c.get('deps');
  const principal = c.get('viewer')!.principal;
  const [steps, contracts] = await Promise.all([
    ifAllowed(async () => {
      await ensurePermissionOrSigner(deps, principal, 'task:view');
      return recentTaskActivity(deps, principal, shown.activity);
    }),
    ifAllowed(async () => recentContractActivity(deps, await contractCallerOf(c), shown.activity)),
  ]);
  if (steps === null && contracts === null) return null;
  const items: Activity[] = [
    ...(steps ?? []).map((step) => ({
      at: step.at,
      label: t.history[step.action],
      subject: t.step(step.stepName, step.documentTitle),
      href: dossierLink(step.folderId),
    })),
    ...(contracts ?? []).map((event) => ({
      at: event.at,
      label: t.contract[event.action],
      subject: event.title,
      href: contractPath(event.contractId),
    })),
  ];
  return items.sort((a, b) => b.at.localeCompare(a.at)).slice(0, shown.activity);
}

/** `/dashboard`: what the signed-in person has to do and what waits on others. */
export function dashboardPages(app: Hono<WebEnv>): void {
  app.get('/dashboard', async (c) => {
    const t = c.get('t');
    const locale = c.get('locale');
    const deps = c.get('deps');
    const principal = c.get('viewer')!.principal;
    const [tasks, counts, waiting, activity] = await Promise.all([
      ifAllowed(async () => {
        await ensurePermissionOrSigner(deps, principal, 'task:view');
        return upcomingTasks(deps, principal, shown.tasks);
      }),
      ifAllowed(async () => {
        await ensurePermissionOrSigner(deps, principal, 'document:view');
        return dossierCounts(deps, principal);
      }),
      ifAllowed(async () =>
        contractsWaitingForOthers(
          deps,
          await contractCallerOf(c, contractReaders),
          shown.contracts,
        ),
      ),
      recentActivity(c),
    ]);
    const now = deps.clock.now();
    const nothing = tasks === null && counts === null && waiting === null && activity === null;
    return renderPage(
      c,
      { title: t.dashboard.title, active: 'dashboard' },
      <>
        <div class="page-head">
          <div>
            <h1>{t.dashboard.title}</h1>
            <p class="muted page-intro">{t.dashboard.intro}</p>
          </div>
        </div>
        {nothing ? <p class="card empty">{t.dashboard.nothing}</p> : null}
        <div class="dashboard">
          <div class="dash-column">
            {tasks ? <TaskCard t={t} locale={locale} tasks={tasks} now={now} /> : null}
            {waiting ? <ContractCard t={t} locale={locale} waiting={waiting} /> : null}
          </div>
          <div class="dash-column">
            {counts ? <DossierCard t={t} counts={counts} /> : null}
            {activity ? <ActivityCard t={t} locale={locale} items={activity} /> : null}
          </div>
        </div>
      </>,
    );
  });
}
