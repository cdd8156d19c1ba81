import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../context';
import { DomainError } from '../errors/domainError';

/**
 * Request body limits: one mechanism for every route.
 *
 * `guardBodies()` runs first for every request (app.ts). It reads nothing: it puts a counting
 * stream in front of the body that refuses, with 413 and without reading on, a body over the
 * route's limit: at the first read when the Content-Length announces too much, at the chunk
 * that crosses the limit otherwise. The limit is `bodyLimits.default` unless the route declares
 * its own with `limitBody(bytes)`, placed after the route's credential check. Bodies are read
 * only by the route's validators and handler, which run after its middleware, so a caller
 * without a credential is refused before a byte of the body is read.
 */
export const bodyLimits = {
  /** Every route that declares nothing: JSON bodies of a few fields. */
  default: 64 * 1024,
} as const;

/** A refusal of a body over `maxBytes`; the connection closes after it (nothing more is read). */
export type BodyRefusal = (maxBytes: number) => DomainError;

export const payloadTooLarge: BodyRefusal = (maxBytes) =>
  new DomainError('PAYLOAD_TOO_LARGE', `The request body exceeds ${maxBytes} bytes`);

interface BodyGuard {
  limit: number;
  refusal: BodyRefusal;
  /** Set once the body was refused: the answer, whatever the reader made of the failed read. */
  refused: DomainError | null;
}

const guards = new WeakMap<Context, BodyGuard>();

function contentLength(c: Context): number {
  const header = c.req.header('content-length');
  return header === undefined ? Number.NaN : Number(header);
}

function install(c: Context, limit: number, refusal: BodyRefusal): BodyGuard {
  const guard: BodyGuard = { limit, refusal, refused: null };
  guards.set(c, guard);
  const request = c.req.raw;
  const source = request.body;
  if (source === null) return guard;
  const announced = contentLength(c);
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  let received = 0;
  const refuse = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    guard.refused = guard.refusal(guard.limit);
    // The source is left unread (not cancelled: that would reset the connection before the
    // answer); the server discards what is in flight and closes (Connection: close).
    controller.error(guard.refused);
  };
  const limited = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (reader === null) {
          if (announced > guard.limit) return refuse(controller);
          reader = source.getReader();
        }
        const { done, value } = await reader.read();
        if (done) return controller.close();
        received += value.byteLength;
        if (received > guard.limit) return refuse(controller);
        controller.enqueue(value);
      },
      cancel: (reason) => (reader ?? source).cancel(reason),
    },
    // Nothing is pulled before a reader asks: not one chunk before the credential check.
    { highWaterMark: 0 },
  );
  c.req.raw = new Request(request, { body: limited, duplex: 'half' } as RequestInit);
  return guard;
}

/** The app-wide guard (app.ts, before every route): `bodyLimits.default` unless declared. */
export function guardBodies(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      install(c, bodyLimits.default, payloadTooLarge);
    }
    await next();
  };
}

/**
 * A route's own body limit, in place of the default: list it in the route's middleware after
 * the credential check. A Content-Length over it is refused here at once (413, nothing read); a
 * body without one is cut off at the chunk that passes it. `refusal` names the error (the
 * contract upload answers FILE_TOO_LARGE); `Infinity` is for a route that reads a bounded
 * prefix itself and stops (the sandbox webhook receiver).
 */
export function limitBody(
  maxBytes: number,
  refusal: BodyRefusal = payloadTooLarge,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    // A router used without the app's guard (a test of one domain) still gets its limit.
    const guard = guards.get(c) ?? install(c, maxBytes, refusal);
    guard.limit = maxBytes;
    guard.refusal = refusal;
    if (contentLength(c) > maxBytes) {
      guard.refused = refusal(maxBytes);
      throw guard.refused;
    }
    await next();
  };
}

/**
 * The refusal of this request's body, if it was refused: the error handler answers it, with
 * `Connection: close` (nothing more of the body is read, so the connection cannot carry another
 * request).
 */
export function bodyRefusalOf(c: Context): DomainError | null {
  const refused = guards.get(c)?.refused ?? null;
  if (refused) c.header('Connection', 'close');
  return refused;
}
