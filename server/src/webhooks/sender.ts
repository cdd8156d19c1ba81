import type { AppDeps } from '../context';
import { DomainError } from '../errors/domainError';
import {
  type OutboundPool,
  type Resolver,
  type SafeResponse,
  safeHttpsRequest,
} from '../outbound/safeFetch';
import { signatureHeader } from './signature';
import { type OpenedSecrets, type SealedSecrets, signingSecrets } from './subscriptions';

/**
 * One HTTP attempt of one webhook: the spec's headers, the stored bytes, the SSRF-safe client
 * (HTTPS only, the address policy and OUTBOUND_ALLOWLIST, no redirect following), one deadline,
 * and an answer read only up to a small excerpt. Every outcome is a result, never a throw.
 */

/** Spec "Delivery rules": 10 seconds per attempt. */
export const webhookTimeoutMs = 10_000;
/** How much of a receiver's answer is kept. */
export const responseExcerptBytes = 4096;

export interface OutgoingWebhook {
  url: string;
  eventId: string;
  eventType: string;
  /** The stored canonical JSON bytes, sent as they are. */
  body: Buffer;
  /** Valid secrets, current first (see signature.ts). */
  secrets: readonly string[];
}

export interface SendOptions {
  timeoutMs?: number;
  excerptBytes?: number;
  resolver?: Resolver;
  /** Keep-alive connections (the worker's); one-shot connections without. */
  pool?: OutboundPool;
  /** Signing secrets decrypted once (the worker's); decrypted per send without. */
  openedSecrets?: OpenedSecrets;
}

export interface AttemptResult {
  /** The receiver's status; 0 when there was no connection or no answer within the deadline. */
  httpStatus: number;
  latencyMs: number;
  success: boolean;
  /** Why it failed; null on success. */
  error: string | null;
  /** The start of the receiver's answer, as text. */
  responseBody: string;
  /** What was sent, secrets excluded (the signature is not one). */
  requestHeaders: Record<string, string>;
}

/** The headers of document 1 ("Request headers") plus `X-Webhook-Timestamp` (unix seconds). */
export function webhookHeaders(
  deps: Pick<AppDeps, 'config' | 'clock'>,
  message: OutgoingWebhook,
): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': `${deps.config.serviceName}-Webhook/1.0`,
    'X-Webhook-Event': message.eventType,
    'X-Webhook-Id': message.eventId,
    'X-Webhook-Signature': signatureHeader(message.secrets, message.body),
    'X-Webhook-Timestamp': String(Math.floor(deps.clock.now().getTime() / 1000)),
  };
}

/**
 * Reads at most `limit` bytes of the answer and closes the rest; a broken body (the deadline, a
 * reset) ends the read: the status decided the outcome already, it only shortens the excerpt.
 */
function excerptOf(response: SafeResponse, limit: number): Promise<string> {
  const { body } = response;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      body.off('data', take);
      response.discard();
      resolve(Buffer.concat(chunks).subarray(0, limit).toString('utf8'));
    };
    const take = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) end();
    };
    body.on('data', take);
    body.once('end', end);
    body.once('error', end);
    body.once('close', end);
  });
}

function failureText(error: unknown): string {
  if (error instanceof DomainError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

function statusError(response: SafeResponse): string | null {
  const { status } = response;
  if (status >= 200 && status < 300) return null;
  if (status >= 300 && status < 400) {
    const location = response.headers.location;
    return `HTTP ${status}: redirect not followed${location ? ` (Location: ${location})` : ''}`;
  }
  return `HTTP ${status}`;
}

/**
 * POSTs the webhook once. Success is a 2xx status, known when the headers arrive (the latency
 * is measured to that point); the answer is then read up to the excerpt size and dropped.
 */
export async function sendWebhook(
  deps: Pick<AppDeps, 'config' | 'clock'>,
  message: OutgoingWebhook,
  options: SendOptions = {},
): Promise<AttemptResult> {
  const timeoutMs = options.timeoutMs ?? webhookTimeoutMs;
  const excerptBytes = options.excerptBytes ?? responseExcerptBytes;
  const requestHeaders = webhookHeaders(deps, message);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let response: SafeResponse;
  try {
    response = await safeHttpsRequest(message.url, {
      method: 'POST',
      headers: requestHeaders,
      body: message.body,
      allowlist: deps.config.outboundAllowlist,
      timeoutMs,
      // Above the excerpt, so that the cap never fails a read the excerpt stops anyway.
      maxResponseBytes: excerptBytes + 65_536,
      ...(options.resolver ? { resolver: options.resolver } : {}),
      ...(options.pool ? { pool: options.pool } : {}),
    });
  } catch (error) {
    return {
      httpStatus: 0,
      latencyMs: elapsed(),
      success: false,
      error: failureText(error),
      responseBody: '',
      requestHeaders,
    };
  }
  const latencyMs = elapsed();
  const error = statusError(response);
  const responseBody = await excerptOf(response, excerptBytes);
  return {
    httpStatus: response.status,
    latencyMs,
    success: error === null,
    error,
    responseBody,
    requestHeaders,
  };
}

/** Sends a claimed delivery, signed with the subscription's secrets valid now. */
export async function sendClaimed(
  deps: Pick<AppDeps, 'config' | 'clock' | 'secrets'>,
  delivery: {
    url: string;
    eventId: string;
    eventType: string;
    body: Buffer;
    sealed: SealedSecrets;
  },
  options: SendOptions = {},
): Promise<AttemptResult> {
  let secrets: string[];
  try {
    secrets = signingSecrets(
      deps.secrets,
      delivery.sealed,
      deps.clock.now(),
      options.openedSecrets,
    );
  } catch {
    return {
      httpStatus: 0,
      latencyMs: 0,
      success: false,
      error: 'the signing secret cannot be decrypted (was SECRET_KEY changed?)',
      responseBody: '',
      requestHeaders: {},
    };
  }
  return sendWebhook(
    deps,
    {
      url: delivery.url,
      eventId: delivery.eventId,
      eventType: delivery.eventType,
      body: delivery.body,
      secrets,
    },
    options,
  );
}
