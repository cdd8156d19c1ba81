import type { AppDeps } from '../context';
import { ConfigError } from '../errors/configError';
import { OutboundPool, type Resolver } from '../outbound/safeFetch';
import { onOutboxWrite } from './events';
import {
  type ClaimedDelivery,
  claimDueDeliveries,
  type FinishedAttempt,
  recordAttempts,
  releaseClaims,
} from './outbox';
import { type SendOptions, sendClaimed, webhookTimeoutMs } from './sender';

/**
 * The webhook worker: leases due deliveries (outbox.ts), sends up to `concurrency` of them at
 * once outside any transaction, records the results in group commits, and sleeps when nothing is
 * due. Enqueued events of this process wake it at once; work written by another process (the
 * CLI's redeliver) is found by polling. Killing the process at any point loses nothing: a lease
 * that is not completed expires and the delivery is claimed again, with the same event id and
 * the same bytes.
 */

export interface WebhookWorkerOptions {
  /** Parallel sends. Default 16. */
  concurrency?: number;
  /** Deadline of one attempt. Default 10 000 ms (the spec's). */
  timeoutMs?: number;
  /** How long a claim holds a delivery; keep it above `timeoutMs`. Default timeoutMs + 20 s. */
  leaseMs?: number;
  /** Sleep between looks for due work when idle. Default 500 ms. */
  pollIntervalMs?: number;
  /** Bytes of each answer kept. Default 4096. */
  excerptBytes?: number;
  /** DNS resolution of receiver host names (tests). */
  resolver?: Resolver;
  /** false: no background loop; only `drain()` sends (tests driving a ManualClock). */
  poll?: boolean;
  /** The idle wait; resolves after `ms` or when `signal` aborts (a wake-up). Injectable for tests. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export interface WebhookWorker {
  /** Stops polling, waits for the sends in flight and their records. */
  stop(): Promise<void>;
  /** Sends every delivery due now (by deps.clock), round after round, until none is due. */
  drain(): Promise<void>;
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

function positive(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^[1-9]\d{0,6}$/.test(raw)) {
    throw new ConfigError(`${name} must be a positive integer, got "${raw}"`);
  }
  return Number(raw);
}

/**
 * Tuning from the environment: WEBHOOK_CONCURRENCY (parallel sends), WEBHOOK_POLL_MS (idle
 * poll), WEBHOOK_LEASE_SECONDS (claim lease; above the 10 s timeout). All optional.
 */
export function webhookWorkerOptionsFromEnv(env: NodeJS.ProcessEnv): WebhookWorkerOptions {
  const options: WebhookWorkerOptions = {};
  const concurrency = positive(env, 'WEBHOOK_CONCURRENCY');
  const poll = positive(env, 'WEBHOOK_POLL_MS');
  const lease = positive(env, 'WEBHOOK_LEASE_SECONDS');
  if (concurrency !== undefined) options.concurrency = concurrency;
  if (poll !== undefined) options.pollIntervalMs = poll;
  if (lease !== undefined) options.leaseMs = lease * 1000;
  return options;
}

export function startWebhookWorker(
  deps: AppDeps,
  options: WebhookWorkerOptions = {},
): WebhookWorker {
  const concurrency = options.concurrency ?? 16;
  const timeoutMs = options.timeoutMs ?? webhookTimeoutMs;
  const leaseMs = options.leaseMs ?? timeoutMs + 20_000;
  const pollIntervalMs = options.pollIntervalMs ?? 500;
  const sleep = options.sleep ?? defaultSleep;
  const logger = deps.logger.child({ component: 'webhook-worker' });

  let stopped = false;
  let sleeping: AbortController | null = null;
  let woken = false;
  /** Claimed and waiting for a free slot (claims are batched: one transaction for many). */
  const ready: ClaimedDelivery[] = [];
  /** Sends in flight; a slot frees when its answer is in, before the result is recorded. */
  const inflight = new Set<Promise<void>>();

  // Group commit: results wait one turn of the event loop, then go in one transaction; results
  // that arrive while it runs go into the next one.
  const queue: FinishedAttempt[] = [];
  let flushing: Promise<void> | null = null;
  async function flush(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    while (queue.length > 0) {
      const batch = queue.splice(0);
      try {
        await recordAttempts(deps, batch);
      } catch (error) {
        // The deliveries stay leased; they are sent again when the lease expires.
        logger.error({ err: error, count: batch.length }, 'could not record webhook attempts');
      }
    }
    flushing = null;
  }
  function record(finished: FinishedAttempt): void {
    queue.push(finished);
    flushing ??= flush();
  }
  async function recorded(): Promise<void> {
    while (flushing) await flushing;
  }

  const sendOptions: SendOptions = {
    timeoutMs,
    ...(options.excerptBytes ? { excerptBytes: options.excerptBytes } : {}),
    ...(options.resolver ? { resolver: options.resolver } : {}),
    // Keep-alive connections to receivers, checked like one-shot ones; closed by stop().
    pool: new OutboundPool({
      allowlist: deps.config.outboundAllowlist,
      ...(options.resolver ? { resolver: options.resolver } : {}),
    }),
  };

  async function deliver(delivery: ClaimedDelivery): Promise<void> {
    try {
      record({ delivery, result: await sendClaimed(deps, delivery, sendOptions) });
    } catch (error) {
      // Left leased: the delivery is claimed again when the lease expires.
      logger.error({ err: error, deliveryId: delivery.deliveryId }, 'webhook attempt crashed');
    }
  }

  function start(delivery: ClaimedDelivery): void {
    const running: Promise<void> = deliver(delivery).finally(() => inflight.delete(running));
    inflight.add(running);
  }

  async function claim(): Promise<ClaimedDelivery[]> {
    try {
      return await claimDueDeliveries(deps, concurrency, leaseMs);
    } catch (error) {
      logger.error({ err: error }, 'could not claim webhook deliveries');
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
   * Keeps up to `concurrency` sends in flight and up to `concurrency` more claimed behind them.
   * A claim that came back short means nothing more is due: the loop then only looks again
   * after an idle sleep or a wake-up.
   */
  async function loop(): Promise<void> {
    let exhausted = false;
    while (!stopped) {
      while (ready.length > 0 && inflight.size < concurrency) start(ready.shift()!);
      if (ready.length === 0 && !exhausted) {
        const claimed = await claim();
        ready.push(...claimed);
        exhausted = claimed.length < concurrency;
        continue;
      }
      if (ready.length > 0) {
        // Every slot is busy (the loop above started all it could): wait for one.
        await Promise.race(inflight);
        continue;
      }
      if (stopped) break;
      await idle();
      exhausted = false;
    }
  }

  const unsubscribe = onOutboxWrite(deps.db, wake);
  const running = options.poll === false ? Promise.resolve() : loop();

  return {
    async stop() {
      stopped = true;
      unsubscribe();
      sleeping?.abort();
      await running;
      // Claimed but never sent: handed back, due at once for the next process.
      await releaseClaims(deps, ready.splice(0)).catch((error: unknown) => {
        logger.error({ err: error }, 'could not release webhook claims; their leases will expire');
      });
      await Promise.all(inflight);
      await recorded();
      sendOptions.pool?.close();
    },
    async drain() {
      for (;;) {
        const claimed = await claimDueDeliveries(deps, concurrency, leaseMs);
        if (claimed.length === 0) break;
        await Promise.all(claimed.map(deliver));
        await recorded();
      }
      await Promise.all(inflight);
      await recorded();
    },
  };
}
