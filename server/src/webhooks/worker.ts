import type { AppDeps } from '../context';
import { ConfigError } from '../errors/configError';
import { type RegisteredKind, registerKind } from '../jobs/queue';
import { type Runner, type RunnerOptions, runnerOptions, startRunner } from '../jobs/runner';
import { OutboundPool, type Resolver } from '../outbound/safeFetch';
import { webhookDeliveryKind } from './outbox';
import { type SendOptions, webhookTimeoutMs } from './sender';

/**
 * Webhook deliveries on the job runner: the kind's tuning (WEBHOOK_* environment) and a runner
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

/** The webhook kind, with keep-alive connections to receivers (closed when the runner stops). */
export function webhookKind(deps: AppDeps, options: WebhookWorkerOptions = {}): RegisteredKind {
  const timeoutMs = options.timeoutMs ?? webhookTimeoutMs;
  const send: SendOptions = {
    timeoutMs,
    ...(options.excerptBytes ? { excerptBytes: options.excerptBytes } : {}),
    ...(options.resolver ? { resolver: options.resolver } : {}),
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
