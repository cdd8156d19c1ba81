import type http from 'node:http';
import { pipeline, type Readable } from 'node:stream';

/**
 * Responses whose body is a Node stream (a stored file). In the app (and `app.request()`) the
 * body is a web ReadableStream that reads the Node stream only when it is read; the server
 * (serve.ts) instead takes the Node stream and pipes it straight to the socket: no web stream in
 * between, no promise per chunk, and the socket's backpressure pauses the file read (a paused
 * client holds what the socket buffers, not the file).
 *
 * Only the Response object made here is known: a middleware that makes a new Response from it
 * (Hono does when a header is set after the handler) gets the web stream, which works the same,
 * only slower.
 */

interface NodeBody {
  stream: Readable;
  /** The web stream started reading the Node stream: the server may no longer take it. */
  read: boolean;
}

const bodies = new WeakMap<Response, NodeBody>();

/** Node streams the server has piped to a socket itself (for tests and the bench). */
export const nodeBodyStats = { piped: 0 };

/** A response of `status` and `headers` whose body is `stream`. */
export function nodeBodyResponse(
  stream: Readable,
  init: { status: number; headers: Record<string, string> },
): Response {
  const body: NodeBody = { stream, read: false };
  let chunks: AsyncIterator<Buffer> | null = null;
  const web = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        body.read = true;
        chunks ??= stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(new Uint8Array(next.value));
      },
      cancel() {
        stream.destroy();
      },
    },
    // Pulled only when read: nothing leaves the Node stream before a reader asks.
    { highWaterMark: 0 },
  );
  const response = new Response(web, init);
  bodies.set(response, body);
  return response;
}

/**
 * A HEAD request's answer: Hono runs the GET handler and keeps only the headers, so the file the
 * handler opened would stay open until collected; it is closed here.
 */
export function discardNodeBody(response: Response): void {
  const body = bodies.get(response);
  if (body === undefined) return;
  bodies.delete(response);
  body.stream.destroy();
}

/**
 * Sends `response` on `outgoing` by piping its Node stream, when it is one made by
 * `nodeBodyResponse` that nothing read yet. False: the caller sends it as usual. A HEAD
 * request gets the headers only, and the stream is closed.
 */
export function sendNodeBody(
  response: Response,
  method: string | undefined,
  outgoing: http.ServerResponse,
): boolean {
  const body = bodies.get(response);
  if (body === undefined || body.read) return false;
  bodies.delete(response);
  const headers: string[] = [];
  for (const [name, value] of response.headers) {
    if (name !== 'set-cookie') headers.push(name, value);
  }
  for (const cookie of response.headers.getSetCookie()) headers.push('set-cookie', cookie);
  outgoing.writeHead(response.status, headers);
  if (method === 'HEAD') {
    body.stream.destroy();
    outgoing.end();
    return true;
  }
  nodeBodyStats.piped += 1;
  // A client that goes away, or a read error, destroys both: the file is closed either way, and
  // a cut answer is seen as one (fewer bytes than its Content-Length).
  pipeline(body.stream, outgoing, () => undefined);
  return true;
}
