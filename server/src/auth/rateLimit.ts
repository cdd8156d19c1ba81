import crypto from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv, Principal } from '../context';
import type { Db } from '../db/database';
import { DomainError, Unauthenticated } from '../errors/domainError';
import type { RateLimits } from '../platform/config';
import {
  countInRateWindow,
  deleteRateWindowsBefore,
  type RateWindowKey,
  rateWindowCount,
} from './queries';

export type RateClass = keyof RateLimits;

const windowMs = 60_000;

/** The bucket of failed credential checks per client address (see guardCredentialCheck). */
const failedChecksBucket = 'auth-failures';

/** Longer caller names (a forwarded address is the client's to write) are stored as a digest. */
const maxCallerLength = 200;

function windowKey(bucket: string, caller: string, nowMs: number): RateWindowKey {
  const start = nowMs - (nowMs % windowMs);
  return {
    bucket,
    caller:
      caller.length <= maxCallerLength
        ? caller
        : `sha256:${crypto.createHash('sha256').update(caller).digest('hex')}`,
    windowStart: new Date(start).toISOString(),
  };
}

function secondsLeft(key: RateWindowKey, nowMs: number): number {
  return Math.max(1, Math.ceil((Date.parse(key.windowStart) + windowMs - nowMs) / 1000));
}

/**
 * The newest window each database was pruned for, by this process: an economy only (every
 * instance prunes once a minute; deleting twice is harmless), never a count.
 */
const prunedUpTo = new WeakMap<Db, string>();

/**
 * The first count of a new minute in this process deletes the windows before the previous one
 * (kept so that an instance whose clock lags a little still finds its window).
 */
async function pruneOnce(db: Db, key: RateWindowKey): Promise<void> {
  const done = prunedUpTo.get(db);
  if (done !== undefined && done >= key.windowStart) return;
  prunedUpTo.set(db, key.windowStart);
  await deleteRateWindowsBefore(db, new Date(Date.parse(key.windowStart) - windowMs).toISOString());
}

/** Counts one request of `caller` in `bucket`; the seconds to wait when over `limit`, else 0. */
async function countRequest(
  db: Db,
  bucket: string,
  limit: number,
  caller: string,
  nowMs: number,
): Promise<number> {
  const key = windowKey(bucket, caller, nowMs);
  await pruneOnce(db, key);
  const count = await countInRateWindow(db, key);
  return count <= limit ? 0 : secondsLeft(key, nowMs);
}

/** Like `countRequest` for the next request, without counting it: 0 while budget is left. */
async function waitBefore(
  db: Db,
  bucket: string,
  limit: number,
  caller: string,
  nowMs: number,
): Promise<number> {
  const key = windowKey(bucket, caller, nowMs);
  return (await rateWindowCount(db, key)) < limit ? 0 : secondsLeft(key, nowMs);
}

/**
 * Fixed one-minute windows per (class, caller). The caller is the checked credential when
 * there is one, the client address otherwise. The counts live in the database (rate_windows),
 * so every instance behind one address draws on the same budget; the limiter holds the limits.
 */
export class RateLimiter {
  constructor(private readonly limits: RateLimits) {}

  /** Counts one request; returns the seconds to wait when over the limit, or 0. */
  consume(db: Db, rateClass: RateClass, caller: string, nowMs: number): Promise<number> {
    return countRequest(db, rateClass, this.limits[rateClass], caller, nowMs);
  }
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
export async function enforceRateLimit(
  c: Context<AppEnv>,
  limiter: RateLimiter,
  rateClass: RateClass,
): Promise<void> {
  const principal = c.var.principal;
  const caller = principal ? principalKey(principal) : `ip:${clientAddress(c)}`;
  const deps = c.get('deps');
  const wait = await limiter.consume(deps.db, rateClass, caller, deps.clock.now().getTime());
  if (wait > 0) throw new RateLimited(wait);
}

/** Place after `authenticate` so the limit follows the credential, not the address. */
export function rateLimit(limiter: RateLimiter, rateClass: RateClass): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await enforceRateLimit(c, limiter, rateClass);
    await next();
  };
}

/**
 * Runs the check of a presented credential. An address that used up its budget of failed checks
 * gets 429 before its credential is looked at (so a right guess is not told apart from a wrong
 * one) until the minute is over; every 401 of the check is counted against the address.
 * Credential checks run before the per-credential limit (which needs the checked credential), so
 * without this budget a wrong key or token could be retried without end. It holds the `auth`
 * limit (10 a minute), in its own bucket of the database, shared by every instance.
 */
export async function guardCredentialCheck<T>(
  c: Context<AppEnv>,
  check: () => Promise<T>,
): Promise<T> {
  const deps = c.get('deps');
  const limit = deps.config.rateLimits.auth;
  const caller = `ip:${clientAddress(c)}`;
  const wait = await waitBefore(
    deps.db,
    failedChecksBucket,
    limit,
    caller,
    deps.clock.now().getTime(),
  );
  if (wait > 0) throw new RateLimited(wait);
  try {
    return await check();
  } catch (error) {
    if (error instanceof Unauthenticated) {
      await countRequest(deps.db, failedChecksBucket, limit, caller, deps.clock.now().getTime());
    }
    throw error;
  }
}
