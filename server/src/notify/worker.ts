import crypto from 'node:crypto';
import type { AppDeps } from '../context';
import { ApiError } from '../errors/apiError';
import { decryptSecret } from '../platform/secrets';
import { type MailTransport, mailTransportFrom } from './mailTransport';
import type { OutboxRow } from './outbox';
import { claimDue, markAttemptFailed, markSent } from './queries';
import { fileSmsProvider, type SmsProvider, smsProviderFrom } from './sms';

/**
 * The notify worker: leases due outbox rows, sends each OUTSIDE any transaction, then records
 * the result while it still holds the lease. A failed attempt is retried on `retryDelaysMs`
 * (10 s, 1 min, 5 min, 30 min, 2 h: six attempts in all); after the last one the message is
 * failed and logged at error level. A sender killed mid-way loses nothing: its lease expires
 * and another worker takes the row (the message may then go out twice, never zero times).
 */

/** The timers the worker sleeps with; tests pass ones that never fire and call drain(). */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemTimers: Timers = {
  setTimeout: (callback, ms) => {
    const handle = setTimeout(callback, ms);
    handle.unref();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Delays after the 1st, 2nd, … failed attempt; its length + 1 is the number of attempts. */
export const defaultRetryDelaysMs = [10_000, 60_000, 300_000, 1_800_000, 7_200_000];

export interface NotifyWorkerOptions {
  /** Defaults to the configured transport (SMTP or the .eml file outbox). */
  mail?: MailTransport;
  /** Defaults to the configured provider (HTTP gateway or the file outbox). */
  sms?: SmsProvider;
  /** Where sandbox SMS go when the tenant has no developer phone (the file outbox). */
  devSms?: SmsProvider;
  retryDelaysMs?: number[];
  /** How long a claimed row stays leased (5 min; above the transports' own timeouts). */
  leaseMs?: number;
  /** Sleep between polls when nothing was due (1 s). */
  pollIntervalMs?: number;
  /** Rows claimed at once (20). */
  batchSize?: number;
  /** Sends in flight at once (4). */
  concurrency?: number;
  timers?: Timers;
}

export interface NotifyWorker {
  /** Stops polling, waits for the sends in flight, closes the transports. */
  stop(): Promise<void>;
  /** Sends every message due now (and those that become due while it runs); for tests and tools. */
  drain(): Promise<void>;
}

/** An error as stored in last_error and logged: its code and message, never a body. */
function errorText(error: unknown): string {
  if (error instanceof ApiError) return `${error.code}: ${error.message}`.slice(0, 500);
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return (typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message)
    .replace(/\s+/g, ' ')
    .slice(0, 500);
}

async function forEachLimited<T>(
  items: T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await work(item);
    }
  });
  await Promise.all(lanes);
}

function domainOf(address: string): string {
  const match = /@([^>\s]+)>?\s*$/.exec(address);
  return match?.[1] ?? 'localhost';
}

export function startNotifyWorker(deps: AppDeps, options: NotifyWorkerOptions = {}): NotifyWorker {
  const { db, clock, config, logger, secrets } = deps;
  const mail = options.mail ?? mailTransportFrom(config);
  const sms = options.sms ?? smsProviderFrom(config, clock);
  const devSms = options.devSms ?? fileSmsProvider(config.notify.smsDir, clock);
  const delays = options.retryDelaysMs ?? defaultRetryDelaysMs;
  const maxAttempts = delays.length + 1;
  const leaseMs = options.leaseMs ?? 300_000;
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const batchSize = options.batchSize ?? 20;
  const concurrency = options.concurrency ?? 4;
  const timers = options.timers ?? systemTimers;

  const body = (row: OutboxRow, sealed: string | null): string => {
    if (sealed === null) throw new Error('the message body is missing');
    return row.sensitive === 1 ? decryptSecret(secrets, sealed) : sealed;
  };

  async function send(row: OutboxRow): Promise<string | null> {
    if (row.send_to === null) throw new Error('the message has no address to send to');
    if (row.channel === 'mail') {
      const sent = await mail.send({
        from: config.notify.mailFrom,
        to: { name: row.sandbox ? null : row.recipient_name, address: row.send_to },
        subject: row.subject ?? '',
        text: body(row, row.text_body),
        html: body(row, row.html_body),
        headers: row.sandbox ? { 'X-Original-To': row.recipient } : {},
        messageId: `<notify-${row.id}@${domainOf(config.notify.mailFrom)}>`,
        date: clock.now(),
      });
      return sent.providerMessageId;
    }
    const provider = row.route === 'dev_file' ? devSms : sms;
    const sent = await provider.send(row.send_to, body(row, row.text_body));
    return sent.providerMessageId ?? null;
  }

  async function deliver(row: OutboxRow): Promise<void> {
    const facts = {
      notifyId: row.id,
      channel: row.channel,
      kind: row.kind,
      tenantId: row.tenant_id,
    };
    let providerMessageId: string | null;
    try {
      providerMessageId = await send(row);
    } catch (error) {
      const reason = errorText(error);
      const last = row.attempts >= maxAttempts;
      const retryAt = last ? null : new Date(clock.now().getTime() + delays[row.attempts - 1]!);
      const held = await markAttemptFailed(db, row, reason, retryAt);
      if (!held) logger.warn(facts, 'notification lease lost before its failure was recorded');
      else if (last) {
        logger.error(
          { ...facts, attempts: row.attempts, error: reason },
          'notification failed after its last attempt',
        );
      } else {
        logger.warn(
          { ...facts, attempts: row.attempts, error: reason, retryAt: retryAt?.toISOString() },
          'notification attempt failed; will retry',
        );
      }
      return;
    }
    const held = await markSent(db, row, clock.now(), providerMessageId);
    if (!held) logger.warn(facts, 'notification sent after its lease was taken over');
    else logger.info({ ...facts, attempts: row.attempts }, 'notification sent');
  }

  /** One claim and its sends; returns how many rows were claimed. */
  async function cycle(): Promise<number> {
    const claimed = await claimDue(db, {
      now: clock.now(),
      allocation: crypto.randomUUID(),
      batchSize,
      leaseMs,
      maxAttempts,
    });
    await forEachLimited(claimed, concurrency, deliver);
    return claimed.length;
  }

  // Polls and drains run one at a time.
  let chain: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const next = chain.then(work);
    chain = next.catch(() => {});
    return next;
  };

  let stopped = false;
  let timer: unknown = null;
  const schedule = (ms: number): void => {
    if (!stopped) timer = timers.setTimeout(tick, ms);
  };
  function tick(): void {
    timer = null;
    exclusive(cycle).then(
      (claimed) => schedule(claimed >= batchSize ? 0 : pollIntervalMs),
      (error: unknown) => {
        logger.error({ error: errorText(error) }, 'notify worker cycle failed');
        schedule(pollIntervalMs);
      },
    );
  }
  schedule(0);

  return {
    drain: () =>
      exclusive(async () => {
        while ((await cycle()) > 0) {}
      }),
    stop: async () => {
      stopped = true;
      if (timer !== null) timers.clearTimeout(timer);
      timer = null;
      await chain;
      mail.close();
    },
  };
}
