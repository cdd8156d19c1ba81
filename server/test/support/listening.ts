import type http from 'node:http';
import net from 'node:net';
import type { App } from '../../src/app';
import type { Logger } from '../../src/platform/logger';
import { serveApp } from '../../src/serve';

/** An app served by the real HTTP server on 127.0.0.1 (an ephemeral port). */
export interface Listening {
  port: number;
  close(): Promise<void>;
}

export function listen(app: App, logger: Logger): Promise<Listening> {
  return new Promise((resolve) => {
    const server: http.Server = serveApp(
      app.fetch,
      { hostname: '127.0.0.1', port: 0, logger },
      ({ port }) =>
        resolve({
          port,
          close: () =>
            new Promise<void>((done) => {
              server.closeAllConnections();
              server.close(() => done());
            }),
        }),
    );
  });
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** ms from the first byte sent to the whole answer read. */
  ms: number;
  /** Body bytes the client had written when the answer's status line arrived. */
  sentWhenAnswered: number;
}

/**
 * One request on its own connection: `head` (request line and headers, without the blank line
 * that ends them), then the body from `body` (chunks written as the socket drains, stopped as
 * soon as the answer arrives or the server closes). Resolves when the server closes or the
 * answer is complete.
 */
export function rawExchange(
  port: number,
  head: string,
  body: Iterable<Buffer> = [],
  options: { abortAfterBytes?: number } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let sent = 0;
    let sentWhenAnswered = -1;
    let stopped = false;
    const iterator = body[Symbol.iterator]();
    const pump = () => {
      while (!stopped) {
        if (options.abortAfterBytes !== undefined && sent >= options.abortAfterBytes) {
          stopped = true;
          socket.destroy();
          return;
        }
        const next = iterator.next();
        if (next.done) return;
        sent += next.value.length;
        if (!socket.write(next.value)) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    socket.on('connect', () => {
      socket.write(`${head}\r\n\r\n`);
      pump();
    });
    socket.on('data', (chunk: Buffer) => {
      if (sentWhenAnswered < 0) sentWhenAnswered = sent;
      stopped = true;
      chunks.push(chunk);
      const answer = parse(Buffer.concat(chunks).toString('utf8'));
      if (answer) {
        socket.destroy();
        finish(answer);
      }
    });
    let done = false;
    const finish = (answer: Omit<RawAnswer, 'ms' | 'sentWhenAnswered'> | null) => {
      if (done) return;
      done = true;
      if (answer) {
        resolve({ ...answer, ms: performance.now() - started, sentWhenAnswered });
      } else if (options.abortAfterBytes !== undefined) {
        resolve({
          status: 0,
          headers: {},
          body: '',
          ms: performance.now() - started,
          sentWhenAnswered,
        });
      } else reject(new Error(`no answer; ${sent} bytes sent`));
    };
    socket.on('error', () => {
      // A reset after the answer (the server stops reading): the answer counts.
    });
    socket.on('close', () => finish(parse(Buffer.concat(chunks).toString('utf8'))));
  });
}

/** A complete HTTP/1.1 answer with Content-Length, or null while incomplete. */
function parse(text: string): Omit<RawAnswer, 'ms' | 'sentWhenAnswered'> | null {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = text.slice(end + 4);
  const length = Number(headers['content-length']);
  if (Number.isFinite(length) && Buffer.byteLength(body) < length) return null;
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

/** `total` bytes as chunks of one reused buffer: streaming them allocates nothing. */
export function* repeatedBytes(total: number, chunk: Buffer): Generator<Buffer> {
  let left = total;
  while (left > 0) {
    const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
    left -= piece.length;
    yield piece;
  }
}

/** The same, in HTTP/1.1 chunked transfer coding (without the final zero chunk). */
export function* chunkedBytes(total: number, chunk: Buffer): Generator<Buffer> {
  for (const piece of repeatedBytes(total, chunk)) {
    yield Buffer.from(`${piece.length.toString(16)}\r\n`);
    yield piece;
    yield Buffer.from('\r\n');
  }
}
