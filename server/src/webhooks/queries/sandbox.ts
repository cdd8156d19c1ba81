import { z } from 'zod';
import type { Db } from '../../db/database';
import { parseJsonColumn } from '../../db/jsonColumn';

/** The sandbox receiver's table (endpoint 18): bounded per tag and in total. */

const SandboxHeaders = z.record(z.string(), z.string());

/** `webhook_test_requests.headers`: the request's headers as a JSON object of strings. */
export function sandboxHeadersOf(row: { headers: string }): Record<string, string> {
  return parseJsonColumn(SandboxHeaders, 'webhook_test_requests.headers', row.headers);
}

export async function insertSandboxRequest(
  trx: Db,
  request: {
    tag: string;
    receivedAt: string;
    remoteAddress: string | null;
    headers: string;
    body: Buffer;
    bodyBytes: number;
    truncated: boolean;
  },
): Promise<number> {
  const { id } = await trx
    .insertInto('webhook_test_requests')
    .values({
      tag: request.tag,
      received_at: request.receivedAt,
      remote_address: request.remoteAddress,
      headers: request.headers,
      body: request.body,
      body_bytes: request.bodyBytes,
      truncated: request.truncated ? 1 : 0,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

/** Drops a tag's requests beyond the newest `keep`. */
export async function trimTag(trx: Db, tag: string, keep: number): Promise<void> {
  await trx
    .deleteFrom('webhook_test_requests')
    .where('tag', '=', tag)
    .where(
      'id',
      'not in',
      trx
        .selectFrom('webhook_test_requests')
        .select('id')
        .where('tag', '=', tag)
        .orderBy('id', 'desc')
        .limit(keep),
    )
    .execute();
}

/** Drops every request with an id up to `id`. */
export async function dropUpTo(trx: Db, id: number): Promise<void> {
  await trx.deleteFrom('webhook_test_requests').where('id', '<=', id).execute();
}

export function sandboxRequests(db: Db, filter: { tag?: string | undefined; limit: number }) {
  let query = db
    .selectFrom('webhook_test_requests')
    .selectAll()
    .orderBy('id', 'desc')
    .limit(filter.limit);
  if (filter.tag !== undefined) query = query.where('tag', '=', filter.tag);
  return query.execute();
}
