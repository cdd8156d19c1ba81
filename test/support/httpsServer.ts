import fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';

/**
 * A real HTTPS server for tests, with the TEST-ONLY certificate of test/fixtures/tls (trusted by
 * the test process through NODE_EXTRA_CA_CERTS). It listens on 127.0.0.1, port 0, answers
 * scripted routes, and records every TCP connection it accepted, so a test can prove that a
 * refused request never reached it.
 */

const tlsDir = path.join(__dirname, '..', 'fixtures', 'tls');

export const testTls = {
  caFile: path.join(tlsDir, 'ca.pem'),
  cert: () => fs.readFileSync(path.join(tlsDir, 'server.pem')),
  key: () => fs.readFileSync(path.join(tlsDir, 'server-key.pem')),
};

export type Route = (request: IncomingMessage, response: ServerResponse) => void;

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
}

export interface TestHttpsServer {
  port: number;
  /** `https://127.0.0.1:<port>` */
  origin: string;
  url(pathname: string): string;
  /** Every TCP connection accepted, TLS or not, in order. */
  connections: { remoteAddress: string | undefined }[];
  /** Every HTTP request that got through TLS. */
  requests: RecordedRequest[];
  route(pathname: string, handler: Route): void;
  close(): Promise<void>;
}

export async function startHttpsServer(host = '127.0.0.1'): Promise<TestHttpsServer> {
  const routes = new Map<string, Route>();
  const connections: TestHttpsServer['connections'] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<net.Socket>();
  const server = https.createServer({ cert: testTls.cert(), key: testTls.key() }, (req, res) => {
    const pathname = new URL(req.url ?? '/', 'https://test').pathname;
    requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
    const handler = routes.get(pathname);
    if (handler === undefined) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('no such route');
      return;
    }
    handler(req, res);
  });
  server.on('connection', (socket: net.Socket) => {
    connections.push({ remoteAddress: socket.remoteAddress });
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as net.AddressInfo).port;
  const origin = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    port,
    origin,
    url: (pathname) => `${origin}${pathname}`,
    connections,
    requests,
    route: (pathname, handler) => {
      routes.set(pathname, handler);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A TCP server that accepts connections and never says a word (a TLS handshake hangs). */
export async function startSilentServer(): Promise<{
  port: number;
  connections: number;
  close(): Promise<void>;
}> {
  const sockets = new Set<net.Socket>();
  const state = { port: 0, connections: 0, close: async () => {} };
  const server = net.createServer((socket) => {
    state.connections += 1;
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as net.AddressInfo).port;
  state.close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return state;
}

/** The smallest file the PDF check accepts, padded to `size` bytes. */
export function pdfBytes(size = 1024): Buffer {
  const head = Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1');
  return Buffer.concat([head, Buffer.alloc(Math.max(0, size - head.length), 0x20)]);
}

/** Scripted answers. Routes that stream report what they did through the returned object. */
export const routes = {
  /** 200 with these bytes and a correct Content-Length. */
  bytes:
    (body: Buffer, contentType = 'application/pdf'): Route =>
    (_req, res) => {
      res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': body.length });
      res.end(body);
    },

  status:
    (status: number, headers: Record<string, string> = {}): Route =>
    (_req, res) => {
      res.writeHead(status, { 'Content-Type': 'text/plain', ...headers }).end(`status ${status}`);
    },

  redirect:
    (location: string, status = 302): Route =>
    (_req, res) => {
      res.writeHead(status, { Location: location }).end();
    },

  /** Reads the request and never answers. */
  hang: (): Route => () => {},

  /** Headers at once, then `body` split into `chunks` pieces, one every `intervalMs`. */
  drip:
    (body: Buffer, intervalMs: number, chunks = 20): Route =>
    (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/pdf' });
      const step = Math.ceil(body.length / chunks);
      let offset = 0;
      const timer = setInterval(() => {
        if (res.destroyed || offset >= body.length) {
          clearInterval(timer);
          if (!res.destroyed) res.end();
          return;
        }
        res.write(body.subarray(offset, offset + step));
        offset += step;
      }, intervalMs);
      res.on('close', () => clearInterval(timer));
    },

  /**
   * 200 streaming `total` bytes that start with `head` (a PDF header by default), chunked unless
   * a Content-Length is given, until the client leaves.
   */
  stream: (
    total: number,
    options: { contentLength?: number; chunkSize?: number; head?: Buffer } = {},
  ): { route: Route; written: () => number; clientLeft: () => boolean } => {
    let written = 0;
    let left = false;
    const chunkSize = options.chunkSize ?? 64 * 1024;
    const route: Route = (_req, res) => {
      const headers: Record<string, string | number> = { 'Content-Type': 'application/pdf' };
      if (options.contentLength !== undefined) headers['Content-Length'] = options.contentLength;
      res.writeHead(200, headers);
      res.on('close', () => {
        left = written < total;
      });
      const pump = (): void => {
        while (written < total && !res.destroyed) {
          const size = Math.min(chunkSize, total - written);
          const chunk = Buffer.alloc(size, 0x20);
          if (written === 0) (options.head ?? pdfBytes(0)).copy(chunk);
          written += size;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!res.destroyed) res.end();
      };
      pump();
    };
    return { route, written: () => written, clientLeft: () => left };
  },

  /** Announces `announced` bytes, sends `sent` bytes of PDF, then closes the connection. */
  shortBody:
    (announced: number, sent: number): Route =>
    (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/pdf', 'Content-Length': announced });
      res.write(pdfBytes(sent));
      setTimeout(() => res.socket?.destroy(), 20);
    },

  /** Drops the TCP connection without answering. */
  reset: (): Route => (req) => {
    req.socket.destroy();
  },
};
