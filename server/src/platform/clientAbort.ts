/**
 * A client that closes the connection while its request is read (a cancelled upload, a reset)
 * is not a failure of the server: it is logged at info as `client aborted the request`, never as
 * an unhandled error, and counted with nginx's status 499 in the request log.
 */
export const clientClosedRequest = 499;

/** Node's errors for a connection closed under a request being read; by code, across realms. */
export function isClientAbort(error: unknown, request?: Request): boolean {
  if (request?.signal.aborted) return true;
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || message === 'aborted';
}
