import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../errors/configError';
import type { Allowlist } from '../outbound/addressPolicy';
import { type Resolver, safeHttpsRequest } from '../outbound/safeFetch';
import { type Clock, isoNow } from '../platform/clock';
import type { Config, SmsSettings } from '../platform/config';
import { type DevOutboxDeps, devOutboxKeeper, type KeepDevMessage } from './devOutbox';

/** Every way an SMS leaves the service. Rejects when the message was not accepted. */
export interface SmsProvider {
  send(to: string, text: string): Promise<{ providerMessageId?: string }>;
}

/** The development file outbox: one JSON line per message in DATA_DIR/outbox/sms/messages.jsonl. */
export const devSmsFileName = 'messages.jsonl';

/** Provider message ids of the file provider start with this, so the CLI can find the line. */
export const devSmsIdPrefix = 'dev-file:';

export interface DevSmsLine {
  id: string;
  at: string;
  to: string;
  text: string;
}

/**
 * The development provider: keeps the message in the development outbox (the database,
 * devOutbox.ts) and appends `{"id","at","to","text"}` to messages.jsonl. The file holds OTPs in
 * clear: it is for development and for sandbox mode without a developer phone.
 */
export function fileSmsProvider(
  directory: string,
  clock: Clock,
  keep: KeepDevMessage,
): SmsProvider {
  return {
    send: async (to, text) => {
      const line: DevSmsLine = { id: crypto.randomUUID(), at: isoNow(clock), to, text };
      await keep({
        channel: 'sms',
        providerMessageId: `${devSmsIdPrefix}${line.id}`,
        recipient: to,
        content: text,
      });
      fs.mkdirSync(directory, { recursive: true });
      fs.appendFileSync(path.join(directory, devSmsFileName), `${JSON.stringify(line)}\n`);
      return { providerMessageId: `${devSmsIdPrefix}${line.id}` };
    },
  };
}

/** Reads messages.jsonl's lines by id (messages sent before the database kept them); a missing file is empty. */
export function readDevSms(directory: string): Map<string, DevSmsLine> {
  const file = path.join(directory, devSmsFileName);
  const lines = new Map<string, DevSmsLine>();
  if (!fs.existsSync(file)) return lines;
  for (const raw of fs.readFileSync(file, 'utf8').split('\n')) {
    if (raw.trim() === '') continue;
    try {
      const line = JSON.parse(raw) as DevSmsLine;
      lines.set(line.id, line);
    } catch {
      // A line cut by a crash while appending: the others still count.
    }
  }
  return lines;
}

type Encode = (value: string) => string;

type BodyMode = 'json' | 'form' | 'text';

/** The body encoding follows the configured Content-Type: JSON string content, form or raw. */
function bodyMode(headers: Record<string, string>): BodyMode {
  const type =
    Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1] ?? '';
  if (/json/i.test(type)) return 'json';
  return /x-www-form-urlencoded/i.test(type) ? 'form' : 'text';
}

const encoders: Record<BodyMode, Encode> = {
  json: (value) => JSON.stringify(value).slice(1, -1),
  form: (value) => new URLSearchParams({ v: value }).toString().slice(2),
  text: (value) => value,
};

/**
 * Replaces `{{to}}` and `{{text}}` with the escaped values. In a JSON template the placeholders
 * stand inside string quotes: `{"to":"{{to}}","text":"{{text}}"}`.
 */
export function fillTemplate(
  template: string,
  values: { to: string; text: string },
  encode: Encode,
): string {
  return template.replace(/\{\{\s*(to|text)\s*\}\}/g, (_, name: 'to' | 'text') =>
    encode(values[name]),
  );
}

export interface HttpSmsOptions {
  allowlist: Allowlist;
  resolver?: Resolver;
  /** Deadline of one request (10 s). */
  timeoutMs?: number;
}

/** A JSON answer's `messageId`, `message_id` or `id`, when the gateway gives one. */
function gatewayMessageId(body: Buffer): string | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    for (const key of ['messageId', 'message_id', 'id']) {
      const value = parsed?.[key];
      if (typeof value === 'string' || typeof value === 'number') return String(value);
    }
  } catch {}
  return undefined;
}

/**
 * An HTTP gateway: the configured URL (placeholders in its query are URL-encoded), method,
 * headers and body template, sent with the SSRF-safe client (HTTPS only, the address policy and
 * OUTBOUND_ALLOWLIST, no redirects). Success is a 2xx answer; a redirect is a failure.
 */
export function httpSmsProvider(
  settings: Extract<SmsSettings, { provider: 'http' }>,
  options: HttpSmsOptions,
): SmsProvider {
  const mode = bodyMode(settings.headers);
  const encode = encoders[mode];
  if (mode === 'json' && settings.method === 'POST') {
    try {
      JSON.parse(
        fillTemplate(settings.bodyTemplate, { to: '+84900000000', text: 'a "b" \\ c' }, encode),
      );
    } catch {
      throw new ConfigError(
        'SMS_HTTP_BODY_TEMPLATE is not valid JSON once filled in; put {{to}} and {{text}} inside string quotes',
      );
    }
  }
  return {
    send: async (to, text) => {
      const url = fillTemplate(settings.url, { to, text }, encodeURIComponent);
      const body =
        settings.method === 'POST'
          ? Buffer.from(fillTemplate(settings.bodyTemplate, { to, text }, encode), 'utf8')
          : undefined;
      const response = await safeHttpsRequest(url, {
        method: settings.method,
        headers: settings.headers,
        ...(settings.authorization !== undefined ? { authorization: settings.authorization } : {}),
        ...(body !== undefined ? { body } : {}),
        allowlist: options.allowlist,
        ...(options.resolver ? { resolver: options.resolver } : {}),
        timeoutMs: options.timeoutMs ?? 10_000,
        maxResponseBytes: 16 * 1024,
      });
      if (response.status < 200 || response.status > 299) {
        response.discard();
        // The answer's body is not kept: a gateway may echo the message (an OTP) back.
        throw new Error(`SMS gateway answered HTTP ${response.status}`);
      }
      // Accepted: an answer too large or cut short only costs the id, never a second SMS.
      const answer = await response.readAll().catch(() => Buffer.alloc(0));
      const providerMessageId = gatewayMessageId(answer);
      return providerMessageId === undefined ? {} : { providerMessageId };
    },
  };
}

export function smsProviderFrom(deps: DevOutboxDeps & { config: Config }): SmsProvider {
  const settings = deps.config.notify.sms;
  return settings.provider === 'http'
    ? httpSmsProvider(settings, { allowlist: deps.config.outboundAllowlist })
    : devSmsProvider(deps);
}

/** The development provider of this runtime (the file outbox and the database). */
export function devSmsProvider(deps: DevOutboxDeps & { config: Config }): SmsProvider {
  return fileSmsProvider(deps.config.notify.smsDir, deps.clock, devOutboxKeeper(deps));
}
