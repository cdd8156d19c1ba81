import type { Logger } from '../platform/logger';
import {
  claimJobs,
  type Finished,
  onJobWrite,
  type QueueDeps,
  type RegisteredKind,
  recordResults,
  releaseTasks,
  type Task,
} from './queue';

/**
 * The runner: one loop for every registered kind. It keeps up to `concurrency` runs of each kind
 * in flight and as many more claimed behind them (claims are batched: one transaction for
 * many), records results in group commits, and sleeps when nothing is due. Jobs enqueued in this
 * process wake it at once; jobs written by another process (the CLI) are found by polling.
 * Killing the process at any point loses nothing: a lease that is not completed expires and the
 * job is claimed again.
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
  let sleeping: AbortController | null = null;
  let woken = false;
  /** Per kind: claimed and waiting for a free slot. */
  const ready = new Map<string, Task[]>([...kinds.keys()].map((name) => [name, []]));
  /** Per kind: runs in flight; a slot frees when the run ends, before its result is recorded. */
  const running = new Map<string, number>([...kinds.keys()].map((name) => [name, 0]));
  const inflight = new Set<Promise<void>>();

  // Group commit: results wait one turn of the event loop, then go in one transaction; results
  // that arrive while it runs go into the next one.
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
    flushing ??= flush();
  }
  async function recorded(): Promise<void> {
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
      checkIdle();
    });
    inflight.add(run);
  }

  /** Starts what free slots allow; true when a kind still has claims waiting for a slot. */
  function startReady(): boolean {
    let waiting = false;
    for (const [name, tasks] of ready) {
      const { concurrency } = kindOf(name);
      while (tasks.length > 0 && running.get(name)! < concurrency) start(tasks.shift()!);
      if (tasks.length > 0) waiting = true;
    }
    return waiting;
  }

  /** Up to `concurrency` of each kind: the claim is what bounds a drain round. */
  const claimOf = (names: readonly string[], probe = true) =>
    claimJobs(
      deps,
      names.map((name) => ({ kind: kindOf(name), limit: kindOf(name).concurrency })),
      { probe },
    );

  async function claim(names: readonly string[], probe: boolean): Promise<Task[]> {
    try {
      return await claimOf(names, probe);
    } catch (error) {
      logger.error({ err: error }, 'could not claim jobs');
      return [];
    }
  }

  async function idle(): Promise<void> {
    if (woken) {
      woken = false;
      return;
    }
    const controller = new AbortController();
    sleeping = controller;
    checkIdle();
    try {
      await sleep(pollIntervalMs, controller.signal);
    } finally {
      sleeping = null;
    }
  }

  function wake(): void {
    if (sleeping) sleeping.abort();
    else woken = true;
  }

  /**
   * A kind whose claim came back short has nothing more due: it is only looked at again after
   * an idle sleep or a wake-up.
   */
  async function loop(): Promise<void> {
    const exhausted = new Set<string>();
    /** Whether the last claim came back full: work is flowing, the next claim needs no probe. */
    let flowing = false;
    while (!stopped) {
      const waiting = startReady();
      const wanted = [...kinds.keys()].filter(
        (name) => ready.get(name)!.length === 0 && !exhausted.has(name),
      );
      if (wanted.length > 0) {
        const claimed = await claim(wanted, !flowing);
        for (const task of claimed) ready.get(task.kind)!.push(task);
        flowing = false;
        for (const name of wanted) {
          const count = claimed.filter((task) => task.kind === name).length;
          if (count < kindOf(name).concurrency) exhausted.add(name);
          else flowing = true;
        }
        continue;
      }
      if (waiting) {
        // Every slot of a kind with claims waiting is busy: wait for a run to end.
        await Promise.race(inflight);
        continue;
      }
      if (stopped) break;
      await idle();
      exhausted.clear();
    }
  }

  const unsubscribe = onJobWrite(deps.db, wake);
  const looping = options.poll === false ? Promise.resolve() : loop();

  return {
    async stop() {
      stopped = true;
      unsubscribe();
      sleeping?.abort();
      await looping;
      // Claimed but never started: handed back, due at once for the next process.
      const unstarted = [...ready.values()].flatMap((tasks) => tasks.splice(0));
      await releaseTasks(deps, kindOf, unstarted).catch((error: unknown) => {
        logger.error({ err: error }, 'could not release job claims; their leases will expire');
      });
      await Promise.all(inflight);
      await recorded();
      for (const kind of kinds.values()) kind.close();
    },
    async drain() {
      for (;;) {
        const claimed = await claimOf([...kinds.keys()]);
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
