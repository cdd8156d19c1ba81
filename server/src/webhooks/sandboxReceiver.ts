import type { AppDeps } from '../context';
import { type Db, inTransaction } from '../db/database';
import {
  dropUpTo,
  insertSandboxRequest,
  sandboxHeadersOf,
  sandboxRequests,
  trimTag,
} from './queries/sandbox';

/**
 * Endpoint 18, the onboarding sandbox receiver: whatever is POSTed to /api/webhook-test/{tag} is
 * kept (headers and the raw body) so the operator can show a partner what arrived. Anyone can
 * send, so everything is bounded: the body kept is cut at 64 KiB, a tag keeps its last 20
 * requests, the table its last 1,000, and credential headers are stored redacted.
 */

export const sandboxLimits = {
  bodyBytes: 64 * 1024,
  perTag: 20,
  total: 1000,
  tagLength: 100,
} as const;

/** Headers whose value is a credential: kept by name only. */
const credentialHeaders = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-api-key',
  'x-access-token',
  'apikey',
]);

export interface ReceivedRequest {
  tag: string;
  headers: Record<string, string>;
  body: Buffer;
  /** Bytes announced or read; above `body.length` when the body was cut. */
  bodyBytes: number;
  truncated: boolean;
  remoteAddress: string | null;
}

/** A tag as stored: the path segment, cut to 100 characters. */
export function sandboxTag(raw: string): string {
  return [...raw].slice(0, sandboxLimits.tagLength).join('');
}

/** The headers to keep, credential values replaced. */
export function keptHeaders(headers: Headers): Record<string, string> {
  const kept: Record<string, string> = {};
  headers.forEach((value, name) => {
    kept[name] = credentialHeaders.has(name.toLowerCase()) ? '[redacted]' : value;
  });
  return kept;
}

/**
 * Reads a request body up to the cap and stops there (the rest is never read into memory).
 * A body that breaks off is kept as far as it came.
 */
export async function readCappedBody(
  request: Request,
  cap = sandboxLimits.bodyBytes,
): Promise<{ body: Buffer; bytesRead: number; truncated: boolean }> {
  if (!request.body) return { body: Buffer.alloc(0), bytesRead: 0, truncated: false };
  const reader = request.body.getReader();
  const chunks: Buffer[] = [];
  let bytesRead = 0;
  let truncated = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytesRead += value.byteLength;
      chunks.push(Buffer.from(value));
      if (bytesRead > cap) {
        truncated = true;
        break;
      }
    }
  } catch {
    truncated = true;
  } finally {
    if (truncated) reader.cancel().catch(() => {});
  }
  return { body: Buffer.concat(chunks).subarray(0, cap), bytesRead, truncated };
}

/** Stores one request and drops the oldest beyond the bounds, in one transaction. */
export function recordSandboxRequest(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  request: ReceivedRequest,
): Promise<{ id: number; receivedAt: string }> {
  return inTransaction(deps.db, async (trx) => {
    const receivedAt = deps.clock.now().toISOString();
    const id = await insertSandboxRequest(trx, {
      ...request,
      receivedAt,
      headers: JSON.stringify(request.headers),
    });
    await trimTag(trx, request.tag, sandboxLimits.perTag);
    // Ids only grow, so the rows above id - total are the last `total` at most.
    await dropUpTo(trx, id - sandboxLimits.total);
    return { id, receivedAt };
  });
}

export interface SandboxRequestView {
  id: number;
  tag: string;
  receivedAt: string;
  remoteAddress: string | null;
  headers: Record<string, string>;
  /** The body kept, as UTF-8 text. */
  body: string;
  bodyBytes: number;
  truncated: boolean;
}

/** What the sandbox receiver kept, newest first. */
export async function listSandboxRequests(
  db: Db,
  filter: { tag?: string | undefined; limit: number },
): Promise<SandboxRequestView[]> {
  const rows = await sandboxRequests(db, filter);
  return rows.map((row) => ({
    id: row.id,
    tag: row.tag,
    receivedAt: row.received_at,
    remoteAddress: row.remote_address,
    headers: sandboxHeadersOf(row),
    body: row.body.toString('utf8'),
    bodyBytes: row.body_bytes,
    truncated: row.truncated === 1,
  }));
}
