import { findUserById } from '../auth/queries';
import type { AppDeps } from '../context';
import { type Db, inTransaction } from '../db/database';
import type { StepKind } from '../db/schema';
import { claimCurrentPeriod } from '../jobs/schedule';
import type { EventDeps } from './events';
import { dossierEnded, runningStatuses } from './lifecycle';
import { insertHistory } from './queries/dossiers';
import { roleName } from './queries/people';
import { overdueTasks, updateTask } from './queries/tasks';
import { cancelRemainingTurns, updateTurn } from './queries/turns';
import { type ActorSnapshot, actorSnapshot, loadTaskContext, type TurnRow } from './taskContext';

/** `actionLabel` of an OVERDUE history row: processes configure labels for approve and reject only. */
export const overdueLabel = 'Quá hạn';

type SchedulerDeps = EventDeps & Pick<AppDeps, 'logger'>;

/** How many overdue tasks one pass reads at a time. */
const batchSize = 200;

/**
 * The system's OVERDUE record names the assignee of the turn that was due, not whoever runs the
 * scheduler. An untaken role turn has no assignee: the row carries the role's name only.
 */
async function overdueActor(trx: Db, turn: TurnRow, stepKind: StepKind): Promise<ActorSnapshot> {
  if (turn.assignee_user_id !== null) {
    const user = await findUserById(trx, turn.assignee_user_id);
    if (user) return actorSnapshot(stepKind, user, turn);
  }
  const role = turn.role_id === null ? undefined : await roleName(trx, turn.role_id);
  const snapshot: ActorSnapshot = {
    actor_user_id: null,
    actor_name: role?.name ?? null,
    actor_username: null,
    actor_email: null,
    actor_phone: null,
  };
  return snapshot;
}

/**
 * Expires one waiting task whose deadline has passed, inside the caller's transaction: task
 * status 4 (action time = the deadline), its active turn EXPIRED, every remaining turn of the
 * dossier CANCELLED, an OVERDUE history row, and the dossier EXPIRED (no webhook). Returns false,
 * writing nothing, when the task is no longer waiting or not yet due, so running it twice (or
 * from two processes, each in its own BEGIN IMMEDIATE transaction) expires a task once.
 */
export async function expireTask(trx: Db, deps: EventDeps, taskId: number): Promise<boolean> {
  const context = await loadTaskContext(trx, { id: taskId });
  const now = deps.clock.now().toISOString();
  if (context?.task.status !== 1 || context.task.expireAt === null) return false;
  if (context.task.expireAt > now || !runningStatuses.includes(context.dossier.status)) {
    return false;
  }
  const at = context.task.expireAt;
  const due = context.turns.find((turn) => turn.status === 'ACTIVE') ?? context.turns[0];
  await updateTask(trx, taskId, { status: 4, action_at: at });
  if (due) {
    await updateTurn(trx, due.id, { status: 'EXPIRED', acted_at: at });
    await insertHistory(trx, {
      tenant_id: context.task.tenantId,
      dossier_id: context.dossier.id,
      task_id: taskId,
      turn_id: due.id,
      action: 'OVERDUE',
      action_label: overdueLabel,
      action_at: at,
      comment: null,
      ...(await overdueActor(trx, due, context.step.kind)),
    });
  }
  await cancelRemainingTurns(trx, context.dossier.id);
  await dossierEnded(trx, deps, context.dossier.id, 'EXPIRED', at);
  return true;
}

/**
 * Moves every waiting task whose deadline is at or before now to EXPIRED (see expireTask), each
 * in its own transaction. Safe to run at any time and from several processes. Returns how many
 * tasks this call expired.
 */
export async function expireOverdueTasks(deps: SchedulerDeps): Promise<number> {
  let expired = 0;
  for (;;) {
    const due = await overdueTasks(deps.db, deps.clock.now().toISOString(), batchSize).execute();
    let expiredNow = 0;
    for (const { id } of due) {
      if (await inTransaction(deps.db, (trx) => expireTask(trx, deps, id))) expiredNow += 1;
    }
    expired += expiredNow;
    // An expired task leaves the index, so the next batch starts where this one ended.
    if (due.length < batchSize || expiredNow === 0) return expired;
  }
}

export interface DeadlineScheduler {
  /** Stops the timer and waits for a pass in progress. */
  stop(): Promise<void>;
}

/** Another deadline pass run with the tasks' (contracts): returns how many it expired. */
export interface DeadlinePass {
  name: string;
  run(deps: SchedulerDeps): Promise<number>;
}

/** The scheduled_runs row of the deadline passes (jobs/schedule.ts). */
export const deadlinePassName = 'deadlines';

/**
 * Runs expireOverdueTasks and every other pass once per period of `intervalMs` across every
 * instance on the database (the first to look in a period claims it: jobs/schedule.ts; the
 * others skip it): at start (catching up on deadlines that passed while the server was down)
 * and then twice per period, so that each instance looks at least once in every period. A pass
 * never overlaps this instance's previous one; a failed pass is logged and the next period's
 * tries again. The timer does not keep the process alive.
 */
export function startDeadlineScheduler(
  deps: SchedulerDeps,
  intervalMs: number,
  others: readonly DeadlinePass[] = [],
): DeadlineScheduler {
  let running: Promise<void> | null = null;
  let stopped = false;
  const passes: DeadlinePass[] = [{ name: 'tasks', run: expireOverdueTasks }, ...others];
  const runAll = async () => {
    if (!(await claimCurrentPeriod(deps, deadlinePassName, intervalMs))) return;
    for (const { name, run } of passes) {
      try {
        const count = await run(deps);
        if (count > 0) deps.logger.info({ expired: count, of: name }, 'overdue items expired');
      } catch (error) {
        deps.logger.error({ err: error, of: name }, 'deadline pass failed');
      }
    }
  };
  const pass = () => {
    if (running || stopped) return;
    running = runAll()
      .catch((error: unknown) => deps.logger.error({ err: error }, 'deadline pass failed'))
      .finally(() => {
        running = null;
      });
  };
  pass();
  const timer = setInterval(pass, Math.max(1, Math.floor(intervalMs / 2)));
  timer.unref();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
