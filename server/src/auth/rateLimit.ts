import type { Context, MiddlewareHandler } from 'hono';
import type { AppDeps, AppEnv, Principal } from '../context';
import { DomainError, Unauthenticated } from '../errors/domainError';
import type { RateLimits } from '../platform/config';

export type RateClass = keyof RateLimits;

const windowMs = 60_000;

/**
 * Fixed one-minute windows per (class, caller). The caller is the checked credential when
 * there is one, the client address otherwise. Counters live in memory: one host, one process.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly limits: RateLimits) {}

  /** Counts one request; returns the seconds to wait when over the limit, or 0. */
  consume(rateClass: RateClass, caller: string, nowMs: number): number {
    const start = nowMs - (nowMs % windowMs);
    const key = `${rateClass}|${caller}`;
    const current = this.windows.get(key);
    const window = current && current.start === start ? current : { start, count: 0 };
    window.count += 1;
    this.windows.set(key, window);
    if (this.windows.size > 10_000) this.evictBefore(start);
    if (window.count <= this.limits[rateClass]) return 0;
    return secondsLeft(start, nowMs);
  }

  /** Like `consume` for the next request, without counting it: 0 while budget is left. */
  waitBefore(rateClass: RateClass, caller: string, nowMs: number): number {
    const start = nowMs - (nowMs % windowMs);
    const current = this.windows.get(`${rateClass}|${caller}`);
    if (!current || current.start !== start || current.count < this.limits[rateClass]) return 0;
    return secondsLeft(start, nowMs);
  }

  private evictBefore(start: number): void {
    for (const [key, window] of this.windows) if (window.start < start) this.windows.delete(key);
  }
}

function secondsLeft(windowStart: number, nowMs: number): number {
  return Math.max(1, Math.ceil((windowStart + windowMs - nowMs) / 1000));
}

/** A caller over its budget: answered 429 with Retry-After, and told apart by the web pages. */
export class RateLimited extends DomainError {
  constructor(waitSeconds: number) {
    super('RATE_LIMITED', 'Too many requests, retry later', { retryAfterSeconds: waitSeconds });
  }
}

export function clientAddress(c: Context<AppEnv>): string {
  if (c.get('deps').config.trustProxy) {
    const forwarded = c.req.header('x-forwarded-for')?.split(',')[0]?.trim();
    if (forwarded) return forwarded;
  }
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)
    ?.incoming;
  return incoming?.socket?.remoteAddress ?? 'unknown';
}

/** A stable name of the credential, for rate limiting and logs (never the secret). */
function principalKey(principal: Principal): string {
  return principal.kind === 'apiKey'
    ? `key:${principal.keyId}`
    : `${principal.kind}:${principal.actor.id}`;
}

/**
 * Counts the request against its caller's budget of the class (the checked credential, else the
 * client address); 429 RATE_LIMITED with Retry-After when it is spent.
 */
export function enforceRateLimit(
  c: Context<AppEnv>,
  limiter: RateLimiter,
  rateClass: RateClass,
): void {
  const principal = c.var.principal;
  const caller = principal ? principalKey(principal) : `ip:${clientAddress(c)}`;
  const wait = limiter.consume(rateClass, caller, c.get('deps').clock.now().getTime());
  if (wait > 0) throw new RateLimited(wait);
}

/** Place after `authenticate` so the limit follows the credential, not the address. */
export function rateLimit(limiter: RateLimiter, rateClass: RateClass): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    enforceRateLimit(c, limiter, rateClass);
    await next();
  };
}

/**
 * Failed credential checks per client address, one budget per app's deps. Credential checks run
 * before the per-credential limit (which needs the checked credential), so without this budget
 * a wrong key or token could be retried without end. It holds the `auth` limit (10 a minute).
 */
const failedChecks = new WeakMap<AppDeps, RateLimiter>();

function failedChecksOf(deps: AppDeps): RateLimiter {
  let limiter = failedChecks.get(deps);
  if (!limiter) {
    limiter = new RateLimiter(deps.config.rateLimits);
    failedChecks.set(deps, limiter);
  }
  return limiter;
}

/**
 * Runs the check of a presented credential. An address that used up its budget of failed checks
 * gets 429 before its credential is looked at (so a right guess is not told apart from a wrong
 * one) until the minute is over; every 401 of the check is counted against the address.
 */
export async function guardCredentialCheck<T>(
  c: Context<AppEnv>,
  check: () => Promise<T>,
): Promise<T> {
  const deps = c.get('deps');
  const limiter = failedChecksOf(deps);
  const caller = `ip:${clientAddress(c)}`;
  const wait = limiter.waitBefore('auth', caller, deps.clock.now().getTime());
  if (wait > 0) throw new RateLimited(wait);
  try {
    return await check();
  } catch (error) {
    if (error instanceof Unauthenticated) {
      limiter.consume('auth', caller, deps.clock.now().getTime());
    }
    throw error;
  }
}
