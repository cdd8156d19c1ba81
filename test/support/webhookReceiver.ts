import crypto from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { startHttpsServer, type TestHttpsServer } from './httpsServer';
import { recordSecretsOfBody } from './runLog';

/**
 * A webhook receiver for tests on the real HTTPS test server (test CA): every POST is recorded
 * with its raw body bytes, then answered as scripted for its path: a status, a redirect, a hang,
 * a connection reset or a huge body.
 */

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw bytes as they arrived, before any parsing. */
  raw: Buffer;
}

export type Answer =
  | { status: number; body?: string }
  | { redirect: string; status?: 301 | 302 | 307 | 308 }
  | { hang: true }
  /** Kept unanswered until `release(path)`, which answers it 200. */
  | { hold: true }
  | { reset: true }
  | { hugeBytes: number };

export interface WebhookReceiver {
  server: TestHttpsServer;
  url(path: string): string;
  received: ReceivedWebhook[];
  /** Requests of one path. */
  at(path: string): ReceivedWebhook[];
  /** How `path` answers from now on (default 200 "ok"). */
  answer(path: string, answer: Answer): void;
  /** Runs for every request as soon as it is recorded, before it is answered. */
  onReceive(callback: (request: ReceivedWebhook) => void): void;
  /** Answers 200 to every held request of `path`, and to its later ones. */
  release(path: string): void;
  /** Requests of `path` held unanswered right now. */
  held(path: string): number;
  /** Bytes a huge answer had written when the client went away. */
  hugeWritten(): number;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const server = await startHttpsServer();
  const received: ReceivedWebhook[] = [];
  const answers = new Map<string, Answer>();
  let hugeWritten = 0;
  let onReceive: (request: ReceivedWebhook) => void = () => {};
  const handled = new Set<string>();
  const holding = new Map<string, ServerResponse[]>();
  const heldOf = (path: string) => {
    let list = holding.get(path);
    if (!list) {
      list = [];
      holding.set(path, list);
    }
    return list;
  };
  const ok = (res: ServerResponse) => {
    if (!res.destroyed) res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
  };

  const route = (path: string) => {
    if (handled.has(path)) return;
    handled.add(path);
    server.route(path, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const request = { path, headers: req.headers, raw: Buffer.concat(chunks) };
        // Webhooks hand out presigned file URLs: the run checks its logs for them.
        recordSecretsOfBody(request.raw.toString('utf8'), `webhook to ${path}`);
        received.push(request);
        onReceive(request);
        const answer = answers.get(path) ?? { status: 200, body: 'ok' };
        if ('hang' in answer) return;
        if ('hold' in answer) {
          heldOf(path).push(res);
          res.on('close', () => {
            const list = heldOf(path);
            if (list.includes(res)) list.splice(list.indexOf(res), 1);
          });
          return;
        }
        if ('reset' in answer) {
          req.socket.destroy();
          return;
        }
        if ('redirect' in answer) {
          res.writeHead(answer.status ?? 302, { Location: answer.redirect }).end();
          return;
        }
        if ('hugeBytes' in answer) {
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          const chunk = Buffer.alloc(64 * 1024, 0x61);
          hugeWritten = 0;
          const pump = (): void => {
            while (hugeWritten < answer.hugeBytes && !res.destroyed) {
              hugeWritten += chunk.length;
              if (!res.write(chunk)) {
                res.once('drain', pump);
                return;
              }
            }
            if (!res.destroyed) res.end();
          };
          pump();
          return;
        }
        res.writeHead(answer.status, { 'Content-Type': 'text/plain' }).end(answer.body ?? '');
      });
    });
  };

  return {
    server,
    url: (path) => {
      route(path);
      return server.url(path);
    },
    received,
    at: (path) => received.filter((r) => r.path === path),
    answer: (path, answer) => {
      route(path);
      answers.set(path, answer);
    },
    onReceive: (callback) => {
      onReceive = callback;
    },
    release: (path) => {
      answers.delete(path);
      for (const res of heldOf(path).splice(0)) ok(res);
    },
    held: (path) => heldOf(path).length,
    hugeWritten: () => hugeWritten,
    close: () => server.close(),
  };
}

/**
 * The receiver recipe of docs/webhooks.md, with plain node:crypto: HMAC-SHA256 of the raw bytes
 * with the secret, compared in constant time with each `sha256=<hex>` value of the header.
 */
export function signatureMatches(raw: Buffer, header: string | undefined, secret: string): boolean {
  if (!header) return false;
  const expected = Buffer.from(
    `sha256=${crypto.createHmac('sha256', secret).update(raw).digest('hex')}`,
  );
  return header
    .split(' ')
    .map((value) => Buffer.from(value))
    .some((value) => value.length === expected.length && crypto.timingSafeEqual(value, expected));
}
