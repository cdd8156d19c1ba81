import crypto from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import {
  getRequestListener,
  type Http2Bindings,
  type HttpBindings,
  RequestError,
} from '@hono/node-server';
import { ConfigError } from './errors/configError';
import { DomainError } from './errors/domainError';
import { type ErrorBody, errorAnswer } from './http/errorStatuses';
import { clientClosedRequest, isClientAbort } from './platform/clientAbort';
import type { Logger } from './platform/logger';
import { sendNodeBody } from './platform/nodeBody';
import { badRequestTarget } from './requestTarget';

/**
 * The HTTP server around the app. Two layers answer before Hono sees a request: Node's parser
 * (a request line or header it cannot parse, an HTTP/1.1 request without Host) and
 * @hono/node-server (a backslash in the path, an absolute URL it cannot parse). Both would send a
 * bare 400 with no body and no request id; here they send the spec's JSON error body with an
 * `X-Request-Id`, as the app does, and log the refusal under that id.
 */

/** The app's fetch; `env` carries Node's request and response (the client's address). */
export type Fetch = (
  request: Request,
  env?: HttpBindings | Http2Bindings,
) => Response | Promise<Response>;

/** What @hono/node-server skips: the answer was written to the socket already. */
const alreadySent = { 'x-hono-already-sent': '1' };

export interface ServeOptions {
  hostname: string;
  port: number;
  logger: Logger;
}

interface Refusal {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function refusal(logger: Logger, body: ErrorBody, reason: string, error?: unknown): Refusal {
  const requestId = crypto.randomUUID();
  if (error === undefined) {
    logger.info({ requestId, status: body.statusCode, reason }, 'request refused before routing');
  } else {
    logger.error({ requestId, err: error }, 'unhandled error');
  }
  return {
    status: body.statusCode,
    headers: { 'Content-Type': 'application/json', 'X-Request-Id': requestId },
    body: JSON.stringify(body),
  };
}

export interface ListeningAddress {
  address: string;
  port: number;
}

/** Serves `fetch` at `options.port` (0: any free port); `onListening` once it listens. */
export function serveApp(
  fetch: Fetch,
  options: ServeOptions,
  onListening: (address: ListeningAddress) => void,
): http.Server {
  const server = createAppServer(fetch, options);
  server.listen(options.port, options.hostname, () => {
    const address = server.address();
    if (address && typeof address === 'object') {
      onListening({ address: address.address, port: address.port });
    }
  });
  return server;
}

/**
 * Listens before anything else is done, so that a port that cannot be had stops the start
 * before anything is written: resolves once listening, or rejects with a ConfigError that says
 * in one line what to change (PORT in use, a port that needs privileges, a HOST that is not an
 * address here). What arrives before the app is ready waits for `fetch` to answer it.
 */
export function listenFirst(
  fetch: Fetch,
  options: ServeOptions,
): Promise<{ server: http.Server; address: ListeningAddress }> {
  const server = createAppServer(fetch, options);
  return new Promise((resolve, reject) => {
    const refused = (error: NodeJS.ErrnoException) =>
      reject(listenRefusal(error, options.hostname, options.port));
    server.once('error', refused);
    server.listen(options.port, options.hostname, () => {
      server.off('error', refused);
      const address = server.address() as net.AddressInfo;
      resolve({ server, address: { address: address.address, port: address.port } });
    });
  });
}

function listenRefusal(error: NodeJS.ErrnoException, host: string, port: number): Error {
  switch (error.code) {
    case 'EADDRINUSE':
      return new ConfigError(
        `PORT ${port} is already in use on ${host}: stop what listens there or set another PORT`,
      );
    case 'EACCES':
      return new ConfigError(
        `PORT ${port} on ${host} needs privileges this process lacks: set a PORT above 1023`,
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ConfigError(`HOST ${host} is not an address of this machine (${error.code})`);
    default:
      return error;
  }
}

function createAppServer(fetch: Fetch, options: ServeOptions): http.Server {
  const { logger } = options;
  // A response backed by a Node stream (a stored file) is piped to the socket here.
  const answer = async (request: Request, env: HttpBindings | Http2Bindings) => {
    const response = await fetch(request, env);
    return env.outgoing instanceof http.ServerResponse &&
      sendNodeBody(response, request.method, env.outgoing)
      ? new Response(null, { headers: alreadySent })
      : response;
  };
  const listener = getRequestListener(answer, {
    // An HTTP/1.0 request may come without Host: it is taken as addressed to us.
    hostname: options.hostname,
    // Runs only when @hono/node-server could not make a Request (or the app threw outside Hono).
    errorHandler: (error: unknown) => {
      if (isClientAbort(error)) {
        logger.info({ reason: String(error) }, 'client aborted the request');
        return new Response(null, { status: clientClosedRequest });
      }
      const refused =
        error instanceof RequestError
          ? refusal(logger, bodyOf(badRequestTarget(lowerFirst(error.message))), error.message)
          : refusal(
              logger,
              bodyOf(new DomainError('INTERNAL', 'Internal server error')),
              '',
              error,
            );
      return new Response(refused.body, { status: refused.status, headers: refused.headers });
    },
  });
  // Node's own Host check answers with an empty body; RFC 9112 §3.2's 400 is sent here instead.
  const server = http.createServer({ requireHostHeader: false }, (incoming, outgoing) => {
    if (incoming.httpVersion === '1.1' && incoming.headers.host === undefined) {
      const body = bodyOf(badRequestTarget('an HTTP/1.1 request needs a Host header'));
      const refused = refusal(logger, body, 'no Host header');
      outgoing
        .writeHead(refused.status, {
          ...refused.headers,
          'Content-Length': Buffer.byteLength(refused.body),
        })
        .end(refused.body);
      return;
    }
    void listener(incoming, outgoing);
  });
  server.on('connection', lingerBeforeClosing);
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) =>
    refuseUnparsable(error, socket, logger),
  );
  return server;
}

const bodyOf = (error: DomainError): ErrorBody => errorAnswer(error).body;

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/** What Node's parser could not read, with the status Node itself would send. */
function unparsableBody(code: string | undefined): ErrorBody {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return bodyOf(new DomainError('HEADERS_TOO_LARGE', 'The request headers are too large'));
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return bodyOf(new DomainError('REQUEST_TIMEOUT', 'The request did not arrive in time'));
  }
  if (code === 'HPE_INVALID_URL') return bodyOf(badRequestTarget('it cannot be parsed'));
  return bodyOf(
    new DomainError('BAD_REQUEST', 'Malformed request: it cannot be parsed as HTTP/1.1'),
  );
}

/** After a parse error the rest of the stream cannot be trusted: answer and close. */
function refuseUnparsable(error: NodeJS.ErrnoException, socket: Duplex, logger: Logger): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const body = unparsableBody(error.code);
  const refused = refusal(logger, body, error.code ?? error.message);
  socket.end(
    [
      `HTTP/1.1 ${refused.status} ${body.error}`,
      ...Object.entries(refused.headers).map(([name, value]) => `${name}: ${value}`),
      `Content-Length: ${Buffer.byteLength(refused.body)}`,
      'Connection: close',
      '',
      refused.body,
    ].join('\r\n'),
  );
}

/** How long a closing connection still reads (and drops) what the client sends. */
const lingerMs = 2000;

/**
 * A lingering close. Node closes a `Connection: close` answer's socket as soon as the answer is
 * written (destroySoon); a client still sending a body we refused (413 before reading it) then
 * gets a reset, and the kernel drops the answer it had not read yet. So the socket sends its FIN,
 * then reads and drops what still comes for up to two seconds, and closes when the client does.
 */
function lingerBeforeClosing(socket: net.Socket): void {
  socket.destroySoon = function lingeringClose(this: net.Socket) {
    if (this.writable) this.end();
    if (this.destroyed) return;
    const close = () => this.destroy();
    const timer = setTimeout(close, lingerMs);
    timer.unref();
    this.once('end', () => {
      clearTimeout(timer);
      close();
    });
    this.on('data', () => undefined);
    this.resume();
  };
}
