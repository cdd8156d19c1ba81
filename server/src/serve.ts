import crypto from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { getRequestListener, RequestError } from '@hono/node-server';
import type { ErrorBody } from './errors/apiError';
import type { Logger } from './platform/logger';
import { badRequestTarget } from './requestTarget';

/**
 * The HTTP server around the app. Two layers answer before Hono sees a request: Node's parser
 * (a request line or header it cannot parse) and @hono/node-server (a backslash in the path, an
 * absolute URL it cannot parse, no Host). Both would send a bare 400 with no body and no request
 * id; here they send the spec's JSON error body with an `X-Request-Id`, as the app does.
 */

type Fetch = (request: Request) => Response | Promise<Response>;

export interface ServeOptions {
  hostname: string;
  port: number;
  logger: Logger;
}

const internalError: ErrorBody = {
  statusCode: 500,
  message: 'Internal server error',
  error: 'Internal Server Error',
  code: 'INTERNAL',
};

export function serveApp(
  fetch: Fetch,
  options: ServeOptions,
  onListening: (address: { address: string; port: number }) => void,
): http.Server {
  const { logger } = options;
  const listener = getRequestListener(fetch, {
    // Runs only when @hono/node-server could not make a Request (or the app threw outside Hono).
    errorHandler: (error: unknown) => {
      const requestId = crypto.randomUUID();
      if (error instanceof RequestError) {
        logger.info({ requestId, status: 400, reason: error.message }, 'request target refused');
        return jsonResponse(400, badRequestTarget(lowerFirst(error.message)).toBody(), requestId);
      }
      logger.error({ requestId, err: error }, 'unhandled error');
      return jsonResponse(500, internalError, requestId);
    },
  });
  // Without a Host, Node would refuse the request itself; @hono/node-server refuses it too,
  // through the handler above.
  const server = http.createServer({ requireHostHeader: false }, listener);
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) =>
    refuseUnparsable(error, socket, logger),
  );
  server.listen(options.port, options.hostname, () => {
    const address = server.address();
    if (address && typeof address === 'object') {
      onListening({ address: address.address, port: address.port });
    }
  });
  return server;
}

function jsonResponse(status: number, body: ErrorBody, requestId: string): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', 'X-Request-Id': requestId },
  });
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/**
 * What Node's parser could not read: the same statuses Node sends (431 for too large headers,
 * 408 for a request too slow to arrive, 400 otherwise), with a JSON body. The connection closes:
 * after a parse error the rest of the stream cannot be trusted.
 */
function refuseUnparsable(error: NodeJS.ErrnoException, socket: Duplex, logger: Logger): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const requestId = crypto.randomUUID();
  const [status, phrase, code, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          'Request Header Fields Too Large',
          'HEADERS_TOO_LARGE',
          'The request headers are too large',
        ]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'REQUEST_TIMEOUT', 'The request did not arrive in time']
        : error.code === 'HPE_INVALID_URL'
          ? [
              400,
              'Bad Request',
              'BAD_REQUEST_TARGET',
              badRequestTarget('it cannot be parsed').message,
            ]
          : [
              400,
              'Bad Request',
              'BAD_REQUEST',
              'Malformed request: it cannot be parsed as HTTP/1.1',
            ];
  logger.info({ requestId, status, reason: error.code }, 'request refused by the parser');
  const body = JSON.stringify({ statusCode: status, message, error: phrase, code });
  socket.end(
    [
      `HTTP/1.1 ${status} ${phrase}`,
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${requestId}`,
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}
