import type { AppDeps } from '../context';
import type { NotifyChannel } from '../db/schema';
import { type JobKind, type RegisteredKind, registerKind } from '../jobs/queue';
import { type Runner, type RunnerOptions, runnerOptions, startRunner } from '../jobs/runner';
import { decryptSecret } from '../platform/secrets';
import { type MailTransport, mailTransportFrom } from './mailTransport';
import { defaultRetryDelaysMs, notifyJobKinds } from './outbox';
import { eraseSensitiveOfJobs, markSent, messagesOfJobs, type OutboxRow } from './queries';
import { devSmsProvider, type SmsProvider, smsProviderFrom } from './sms';

/**
 * E-mail and SMS as job kinds of the one queue (jobs/), one per channel: a claimed message is
 * sent OUTSIDE any transaction and its result recorded while its job still holds the lease. A
 * failed attempt is retried on `retryDelaysMs` (10 s, 1 min, 5 min, 30 min, 2 h: six attempts
 * in all); after the last one the message is failed and logged at error level. A sender killed
 * mid-way loses nothing: its lease expires and another runner takes the job (the message may
 * then go out twice, never zero times). A message past its `discard_after` (an expired OTP) and
 * one whose last attempt was cut off fail without being sent; a final message keeps no
 * sensitive body.
 */

export { defaultRetryDelaysMs };

export interface NotifyWorkerOptions extends RunnerOptions {
  /** Defaults to the configured transport (SMTP or the .eml file outbox). */
  mail?: MailTransport;
  /** Defaults to the configured provider (HTTP gateway or the file outbox). */
  sms?: SmsProvider;
  /** Where sandbox SMS go when the tenant has no developer phone (the file outbox). */
  devSms?: SmsProvider;
  retryDelaysMs?: number[];
  /** How long a claimed message stays leased (5 min; above the transports' own timeouts). */
  leaseMs?: number;
  /** Sends in flight at once, per channel (default MAIL_CONCURRENCY, SMS_CONCURRENCY: 4 each). */
  concurrency?: number;
}

export type NotifyWorker = Runner;

export const interruptedLastAttempt = 'the last attempt was interrupted (lease expired)';
export const discarded = 'discarded: not sent before discard_after';

function domainOf(address: string): string {
  const match = /@([^>\s]+)>?\s*$/.exec(address);
  return match?.[1] ?? 'localhost';
}

/** The mail and SMS kinds; the mail transport is closed when the runner stops. */
export function notifyKinds(deps: AppDeps, options: NotifyWorkerOptions = {}): RegisteredKind[] {
  const { clock, config, logger, secrets } = deps;
  const mail = options.mail ?? mailTransportFrom(deps);
  const sms = options.sms ?? smsProviderFrom(deps);
  const devSms = options.devSms ?? devSmsProvider(deps);

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

  const kindOf = (channel: NotifyChannel): JobKind<OutboxRow, string | null> => ({
    kind: notifyJobKinds[channel],
    concurrency: options.concurrency ?? config.notify.concurrency[channel],
    leaseMs: options.leaseMs ?? 300_000,
    retryDelaysMs: options.retryDelaysMs ?? defaultRetryDelaysMs,
    interruptedError: interruptedLastAttempt,

    async prepare(trx, jobs, now) {
      const rows = new Map(
        (
          await messagesOfJobs(
            trx,
            jobs.map((job) => job.id),
          )
        ).map((row) => [row.job_id, row]),
      );
      return jobs.map((job) => {
        const row = rows.get(job.id);
        if (!row) return { fail: 'no message for this job' };
        if (row.discard_after !== null && row.discard_after <= now) return { fail: discarded };
        return { work: row };
      });
    },

    run: send,

    errorOf: () => null,

    async record(trx, recorded, now) {
      for (const { job, work, result, state } of recorded) {
        if (state === 'done') await markSent(trx, work.id, now, result);
        else if (state === 'failed') await eraseSensitiveOfJobs(trx, [job.id]);
      }
    },

    ended: (trx, jobs) =>
      eraseSensitiveOfJobs(
        trx,
        jobs.map((job) => job.id),
      ),

    reportRecorded({ job, work, error, state }) {
      const facts = {
        notifyId: work.id,
        channel: work.channel,
        kind: work.kind,
        tenantId: work.tenant_id,
      };
      const attempts = job.attempt;
      if (state === 'lease_lost') {
        logger.warn(facts, 'notification finished after its lease was taken over');
      } else if (state === 'done') logger.info({ ...facts, attempts }, 'notification sent');
      else if (state === 'failed') {
        logger.error({ ...facts, attempts, error }, 'notification failed after its last attempt');
      } else {
        logger.warn({ ...facts, attempts, error }, 'notification attempt failed; will retry');
      }
    },

    close: channel === 'mail' ? () => mail.close() : undefined,
  });

  return [registerKind(kindOf('mail')), registerKind(kindOf('sms'))];
}

/** A runner with the mail and SMS kinds alone. */
export function startNotifyWorker(deps: AppDeps, options: NotifyWorkerOptions = {}): NotifyWorker {
  return startRunner(deps, notifyKinds(deps, options), runnerOptions(options));
}
