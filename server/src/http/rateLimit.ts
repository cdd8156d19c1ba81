import type { Context, MiddlewareHandler } from 'hono';
import { principalKey } from '../auth/principal';
import type { AppEnv } from '../context';
import type { RateLimits } from '../platform/config';
import { ApiError } from './errors';

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
    return Math.max(1, Math.ceil((start + windowMs - nowMs) / 1000));
  }

  private evictBefore(start: number): void {
    for (const [key, window] of this.windows) if (window.start < start) this.windows.delete(key);
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

/** Place after `authenticate` so the limit follows the credential, not the address. */
export function rateLimit(limiter: RateLimiter, rateClass: RateClass): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const principal = c.var.principal;
    const caller = principal ? principalKey(principal) : `ip:${clientAddress(c)}`;
    const wait = limiter.consume(rateClass, caller, c.get('deps').clock.now().getTime());
    if (wait > 0) {
      throw new ApiError(429, 'RATE_LIMITED', 'Too many requests, retry later', {
        headers: { 'Retry-After': String(wait) },
      });
    }
    await next();
  };
}
