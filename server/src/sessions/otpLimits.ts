import type { Db } from '../db/database';
import type { OtpEventKind } from '../db/schema';
import { sessionErrors } from './errors';
import { addOtpEvent, type OtpScope, otpEventTimes } from './queries';

/**
 * Limits on one-time codes per signer across sessions (a contract signer, or a dossier task's
 * signing user), on top of each session's own (one code a minute, the fifth wrong code locks
 * it): opening another session resets neither. Rolling windows on deps.clock, counted inside the
 * caller's write transaction, so two requests at once cannot both take the last place.
 *
 * - At most 5 codes sent (SMS or e-mail) per signer in any hour: 429 OTP_SEND_LIMIT_REACHED.
 * - At most 10 wrong codes per signer in any 24 hours: the tenth and any try after it answer
 *   429 OTP_FAILURE_LIMIT_REACHED, and no code is sent meanwhile. Over a contract's life that is
 *   10 guesses a day at a 6-digit code, where one link gave 5 per session before.
 * Both answer Retry-After: the seconds until the oldest counted event leaves its window.
 */
export const otpLimits: Record<OtpEventKind, { count: number; windowMs: number }> = {
  sent: { count: 5, windowMs: 60 * 60_000 },
  failed: { count: 10, windowMs: 24 * 60 * 60_000 },
};

interface Room {
  /** How many more events fit in the window now. */
  left: number;
  /** Seconds until one more fits (0 when one fits now). */
  retryAfter: number;
}

async function roomFor(trx: Db, scope: OtpScope, kind: OtpEventKind, now: Date): Promise<Room> {
  const { count, windowMs } = otpLimits[kind];
  const since = new Date(now.getTime() - windowMs).toISOString();
  const times = await otpEventTimes(trx, scope, kind, since);
  if (times.length < count) return { left: count - times.length, retryAfter: 0 };
  const leavesFirst = Date.parse(times[times.length - count]!) + windowMs;
  return { left: 0, retryAfter: Math.max(1, Math.ceil((leavesFirst - now.getTime()) / 1000)) };
}

function record(trx: Db, scope: OtpScope, kind: OtpEventKind, now: Date): Promise<void> {
  const forgetUpTo = new Date(now.getTime() - otpLimits[kind].windowMs).toISOString();
  return addOtpEvent(trx, scope, kind, now.toISOString(), forgetUpTo);
}

/** Refuses a try when the signer's wrong codes fill their window. */
export async function assertOtpTriesLeft(trx: Db, scope: OtpScope, now: Date): Promise<void> {
  const failures = await roomFor(trx, scope, 'failed', now);
  if (failures.left === 0)
    throw sessionErrors.otpFailureLimit(failures.retryAfter, otpLimits.failed.count);
}

/** Counts a code about to be sent, or refuses it (wrong codes used up, or sends used up). */
export async function takeOtpSend(trx: Db, scope: OtpScope, now: Date): Promise<void> {
  await assertOtpTriesLeft(trx, scope, now);
  const sends = await roomFor(trx, scope, 'sent', now);
  if (sends.left === 0) throw sessionErrors.otpSendLimit(sends.retryAfter, otpLimits.sent.count);
  await record(trx, scope, 'sent', now);
}

/** Counts a wrong code; answers the room left for wrong codes after it. */
export async function countOtpFailure(trx: Db, scope: OtpScope, now: Date): Promise<Room> {
  await record(trx, scope, 'failed', now);
  return roomFor(trx, scope, 'failed', now);
}
