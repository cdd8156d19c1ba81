import type { AppDeps } from '../context';
import { type RegisteredKind, registerKind } from '../jobs/queue';
import { type Runner, type RunnerOptions, runnerOptions, startRunner } from '../jobs/runner';
import { OutboundPool, type Resolver } from '../outbound/safeFetch';
import type { Config } from '../platform/config';
import { webhookDeliveryKind } from './outbox';
import { type SendOptions, webhookTimeoutMs } from './sender';
import { OpenedSecrets } from './subscriptions';

/**
 * Webhook deliveries on the job runner: the kind's tuning (WEBHOOK_* settings) and a runner
 * with this kind alone, for tests and the bench (main.ts runs one runner with every kind).
 */

export interface WebhookWorkerOptions extends RunnerOptions {
  /** Parallel sends. Default 16. */
  concurrency?: number;
  /** Deadline of one attempt. Default 10 000 ms (the spec's). */
  timeoutMs?: number;
  /** How long a claim holds a delivery; keep it above `timeoutMs`. Default timeoutMs + 20 s. */
  leaseMs?: number;
  /** Bytes of each answer kept. Default 4096. */
  excerptBytes?: number;
  /** DNS resolution of receiver host names (tests). */
  resolver?: Resolver;
}

export type WebhookWorker = Runner;

/** The kind's tuning from the configuration (WEBHOOK_* settings); unset ones keep the defaults. */
export function webhookWorkerOptionsOf(config: Config): WebhookWorkerOptions {
  const { concurrency, pollIntervalMs, leaseMs } = config.webhookJobs;
  return {
    ...(concurrency !== undefined ? { concurrency } : {}),
    ...(pollIntervalMs !== undefined ? { pollIntervalMs } : {}),
    ...(leaseMs !== undefined ? { leaseMs } : {}),
  };
}

/** The webhook kind, with keep-alive connections to receivers (closed when the runner stops). */
export function webhookKind(deps: AppDeps, options: WebhookWorkerOptions = {}): RegisteredKind {
  const timeoutMs = options.timeoutMs ?? webhookTimeoutMs;
  const send: SendOptions = {
    timeoutMs,
    ...(options.excerptBytes ? { excerptBytes: options.excerptBytes } : {}),
    ...(options.resolver ? { resolver: options.resolver } : {}),
    openedSecrets: new OpenedSecrets(),
    // Checked like one-shot connections.
    pool: new OutboundPool({
      allowlist: deps.config.outboundAllowlist,
      ...(options.resolver ? { resolver: options.resolver } : {}),
    }),
  };
  return registerKind(
    webhookDeliveryKind(deps, {
      concurrency: options.concurrency ?? 16,
      leaseMs: options.leaseMs ?? timeoutMs + 20_000,
      send,
    }),
  );
}

/** A runner with the webhook kind alone. */
export function startWebhookWorker(
  deps: AppDeps,
  options: WebhookWorkerOptions = {},
): WebhookWorker {
  return startRunner(deps, [webhookKind(deps, options)], runnerOptions(options));
}
