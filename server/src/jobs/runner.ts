import type { Logger } from '../platform/logger';
import {
  claimJobs,
  type Finished,
  onJobWrite,
  type QueueDeps,
  type RegisteredKind,
  recordResults,
  releaseTasks,
  settleAndClaim,
  type Task,
} from './queue';

/**
 * The runner: one loop for every registered kind. Each kind has its own slots (`concurrency`):
 * the runner claims, for every kind with free slots, at most as many due jobs as it has free
 * slots (one transaction for all kinds), starts them at once, and records results in group
 * commits. A kind whose runs hang holds only its own slots: the loop keeps claiming the others,
 * and a run is abandoned (a failed attempt) when its lease runs out. Jobs enqueued wake it at
 * once: on SQLite those of this process (another process's, the CLI's, are found by polling), on
 * PostgreSQL those of every instance (a notification at commit; polling stays the backstop).
 * Every instance runs a runner; their claims never share a job (queue.ts). Killing the process
 * at any point loses nothing: a lease that is not completed expires and the job is claimed again,
 * by whichever instance looks first.
 */

export interface RunnerOptions {
  /** Sleep between looks for due work when idle. Default 500 ms. */
  pollIntervalMs?: number;
  /** false: no background loop; only `drain()` runs jobs (tests driving a ManualClock). */
  poll?: boolean;
  /** The idle wait; resolves after `ms` or when `signal` aborts (a wake-up). Injectable. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** The runner's own options out of a kind's options that extend them. */
export function runnerOptions(options: RunnerOptions): RunnerOptions {
  return {
    ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
    ...(options.poll !== undefined ? { poll: options.poll } : {}),
    ...(options.sleep !== undefined ? { sleep: options.sleep } : {}),
  };
}

export interface Runner {
  /** Stops polling, hands back claims not started, waits for runs in flight and their records. */
  stop(): Promise<void>;
  /** Runs every job due now (by deps.clock), round after round, until none is due. */
  drain(): Promise<void>;
  /**
   * Resolves the next time the loop goes (or, asleep, comes) to rest: asleep, nothing in flight,
   * every result recorded. What a test waits for instead of guessing with timers; never resolves
   * without the loop (`poll: false`).
   */
  whenIdle(): Promise<void>;
}

/**
 * The longest a busy loop waits for more results to share one commit: about one commit's
 * duration (an fsync) on a slow disk.
 */
const gatherMs = 10;

export const defaultSleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

export function startRunner(
  deps: QueueDeps & { logger: Logger },
  registered: readonly RegisteredKind[],
  options: RunnerOptions = {},
): Runner {
  const kinds = new Map<string, RegisteredKind>();
  for (const kind of registered) {
    if (kinds.has(kind.kind)) throw new TypeError(`job kind ${kind.kind} registered twice`);
    kinds.set(kind.kind, kind);
  }
  const kindOf = (name: string): RegisteredKind => kinds.get(name)!;
  const delaysOf = (name: string) => kindOf(name).retryDelaysMs;
  const pollIntervalMs = options.pollIntervalMs ?? 500;
  const sleep = options.sleep ?? defaultSleep;
  const logger = deps.logger.child({ component: 'job-runner' });

  let stopped = false;
  /** The loop's wait when it has nothing to claim: ended by a wake-up, a run's end or the poll. */
  let sleeping: AbortController | null = null;
  /** A wake-up (jobs written) that came while the loop was not asleep. */
  let woken = false;
  /** A run ended (its slot is free) since the loop last looked. */
  let slotFreed = false;
  /** Ends the loop's wait for results (see gather) early: every run in flight has ended. */
  let gathering: (() => void) | null = null;
  /** Per kind: runs in flight; a slot frees when the run ends, before its result is recorded. */
  const running = new Map<string, number>([...kinds.keys()].map((name) => [name, 0]));
  const inflight = new Set<Promise<void>>();

  /** The loop is running: it records results together with its next claim. */
  let looping = false;
  // Group commit: results wait one turn of the event loop, then go in one transaction (the
  // loop's next claim, or a flush of their own without the loop); results that arrive while it
  // runs go into the next one.
  const queue: Finished[] = [];
  let flushing: Promise<void> | null = null;
  async function flush(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    while (queue.length > 0) {
      const batch = queue.splice(0);
      try {
        await recordResults(deps, delaysOf, batch);
      } catch (error) {
        // The jobs stay leased; they run again when the lease expires.
        logger.error({ err: error, count: batch.length }, 'could not record job results');
      }
    }
    flushing = null;
    checkIdle();
  }
  function record(finished: Finished): void {
    queue.push(finished);
    // The loop is nudged when the run's slot frees, right after this.
    if (!looping) flushing ??= flush();
  }
  async function recorded(): Promise<void> {
    if (queue.length > 0) flushing ??= flush();
    while (flushing) await flushing;
  }

  let idleWaiters: (() => void)[] = [];
  function checkIdle(): void {
    if (sleeping === null || inflight.size > 0 || flushing !== null || queue.length > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  async function execute(task: Task): Promise<void> {
    try {
      record(await task.execute());
    } catch (error) {
      // Left leased: the job is claimed again when the lease expires.
      logger.error({ err: error, jobId: task.job.id, kind: task.kind }, 'job run crashed');
    }
  }

  function start(task: Task): void {
    running.set(task.kind, running.get(task.kind)! + 1);
    const run: Promise<void> = execute(task).finally(() => {
      running.set(task.kind, running.get(task.kind)! - 1);
      inflight.delete(run);
      // The loop may be waiting for a slot of this kind.
      slotFreed = true;
      sleeping?.abort();
      if (inflight.size === 0) gathering?.();
      checkIdle();
    });
    inflight.add(run);
  }

  const freeSlots = (name: string) => kindOf(name).concurrency - running.get(name)!;

  const wantedOf = (names: readonly string[], limit: (name: string) => number) =>
    names.map((name) => ({ kind: kindOf(name), limit: limit(name) }));

  /** Records `batch` and claims `wanted` in one transaction; a failure is logged, not thrown. */
  async function cycle(
    batch: readonly Finished[],
    wanted: ReturnType<typeof wantedOf>,
    probe: boolean,
  ): Promise<Task[]> {
    try {
      return (await settleAndClaim(deps, delaysOf, batch, wanted, { probe })).tasks;
    } catch (error) {
      // Results not recorded leave their jobs leased: they run again when the lease expires.
      logger.error({ err: error, results: batch.length }, 'could not record job results and claim');
      return [];
    }
  }

  /**
   * Waits for a wake-up, the poll interval, or a run's end (its slot is free). True when the
   * wait ended by a wake-up or the poll: then every kind is looked at again.
   */
  async function wait(): Promise<boolean> {
    if (!woken && !slotFreed) {
      const controller = new AbortController();
      sleeping = controller;
      checkIdle();
      try {
        await sleep(pollIntervalMs, controller.signal);
      } finally {
        sleeping = null;
      }
      // Not cut short: the poll interval passed.
      if (!controller.signal.aborted) woken = true;
    }
    const rescan = woken;
    woken = false;
    slotFreed = false;
    return rescan;
  }

  function wake(): void {
    woken = true;
    sleeping?.abort();
  }

  /**
   * Group commit under load: while a kind's slots keep filling, the loop lets results gather
   * until every run in flight has ended, `gatherMs` at most, before its next round, so that one
   * commit (one fsync, and one statement per outcome) records a round's worth of results
   * instead of the one or two that end first. Without runs in flight: one turn of the loop.
   */
  async function gather(): Promise<void> {
    if (inflight.size === 0 || stopped) {
      await new Promise((resolve) => setImmediate(resolve));
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, gatherMs);
      function done() {
        clearTimeout(timer);
        gathering = null;
        resolve();
      }
      gathering = done;
    });
  }

  /**
   * A kind whose claim came back short has nothing more due: it is looked at again after a
   * wake-up or the poll interval, not at every run's end. Kinds are claimed together; a kind
   * whose slots are all busy is left out of the claim until one frees.
   */
  async function loop(): Promise<void> {
    const exhausted = new Set<string>();
    /** Whether the last claim filled a kind's free slots: the next claim needs no probe. */
    let flowing = false;
    const wantedNow = () =>
      wantedOf(
        [...kinds.keys()].filter((name) => !exhausted.has(name) && freeSlots(name) > 0),
        freeSlots,
      );
    while (!stopped) {
      if (wantedNow().length > 0 || queue.length > 0) {
        // One turn first, so that the results and free slots that come together share one
        // transaction.
        if (flowing) await gather();
        else if (queue.length > 0) await new Promise((resolve) => setImmediate(resolve));
        const wanted = wantedNow();
        const claimed = await cycle(queue.splice(0), wanted, !flowing);
        if (stopped) {
          // Claimed while stopping: handed back, due at once for the next process.
          await release(claimed);
          break;
        }
        for (const task of claimed) start(task);
        flowing = false;
        for (const { kind, limit } of wanted) {
          const count = claimed.filter((task) => task.kind === kind.kind).length;
          if (count < limit) exhausted.add(kind.kind);
          else flowing = true;
        }
        continue;
      }
      if (stopped) break;
      if (await wait()) exhausted.clear();
    }
  }

  async function release(tasks: readonly Task[]): Promise<void> {
    await releaseTasks(deps, kindOf, tasks).catch((error: unknown) => {
      logger.error({ err: error }, 'could not release job claims; their leases will expire');
    });
  }

  const unsubscribe = onJobWrite(deps.db, wake);
  looping = options.poll !== false;
  const loopEnded = looping
    ? loop().finally(() => {
        looping = false;
      })
    : Promise.resolve();

  return {
    async stop() {
      stopped = true;
      gathering?.();
      unsubscribe();
      sleeping?.abort();
      await loopEnded;
      await Promise.all(inflight);
      await recorded();
      for (const kind of kinds.values()) kind.close();
    },
    async drain() {
      const all = wantedOf([...kinds.keys()], (name) => kindOf(name).concurrency);
      for (;;) {
        const claimed = await claimJobs(deps, all);
        if (claimed.length === 0) break;
        for (const task of claimed) start(task);
        await Promise.all(inflight);
        await recorded();
      }
      await Promise.all(inflight);
      await recorded();
    },
    whenIdle: () =>
      new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
      }),
  };
}
