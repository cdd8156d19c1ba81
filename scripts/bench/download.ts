import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Hono } from 'hono';
import { fileResponse } from '../../server/src/files/download';
import { createLogger } from '../../server/src/platform/logger';
import { serveApp } from '../../server/src/serve';
import { LocalFileStore } from '../../server/src/storage/localFileStore';

/**
 * Download bench: a 50 MB stored file streamed over HTTP by the server's own path (serveApp:
 * @hono/node-server's listener, the file store's read stream, `fileResponse` with its headers),
 * against a plain Node server that does `fs.createReadStream(file).pipe(res)`, in the same run.
 * The servers run in a child process; this process is the client (keep-alive, bytes counted and
 * dropped). Figures: MB/s of each (median of 5 rounds, alternating), the ratio (target >= 0.8),
 * and the server's memory held per paused client (10 clients that read the headers and stop;
 * target < 1 MB each).
 */

const root = path.resolve(__dirname, '..', '..');
const role = process.env.BENCH_DOWNLOAD_ROLE;
const sizeBytes = 50 * 1024 * 1024;
const rounds = 9;
const pausedClients = 10;

/** The servers' side: both servers on one 50 MB file; prints `<app port> <plain port>`. */
async function runServers(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-bench-download-'));
  const files = new LocalFileStore(path.join(dir, 'files'));
  const source = path.join(dir, 'source.pdf');
  const head = Buffer.from('%PDF-1.7\n');
  fs.writeFileSync(source, Buffer.concat([head, crypto.randomBytes(sizeBytes - head.length)]));
  const stored = await files.put(source);
  const file = { sha256: stored.sha256, mimeType: 'application/pdf', title: 'Hợp đồng bench' };
  const storedPath = files.pathOf(stored.sha256);

  const app = new Hono();
  app.get('/file', () => fileResponse({ files }, file));
  const logger = createLogger('warn');
  const memory = () => {
    global.gc?.();
    const used = process.memoryUsage();
    return used.arrayBuffers + used.external;
  };
  app.get('/memory', (c) => c.json({ bytes: memory() }));
  const appServer = serveApp(app.fetch, { hostname: '127.0.0.1', port: 0, logger }, () => {});

  const plain = http.createServer((req, res) => {
    if (req.url === '/memory') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ bytes: memory() }));
      return;
    }
    res.writeHead(200, {
      'Content-Type': 'application/pdf',
      'Content-Length': String(fs.statSync(storedPath).size),
    });
    fs.createReadStream(storedPath).pipe(res);
  });
  plain.listen(0, '127.0.0.1');
  await Promise.all(
    [appServer, plain].map(
      (server) =>
        new Promise((resolve) =>
          server.listening ? resolve(null) : server.once('listening', resolve),
        ),
    ),
  );
  const port = (server: http.Server) => (server.address() as AddressInfo).port;
  process.stdout.write(`${port(appServer)} ${port(plain)}\n`);
  process.on('SIGTERM', () => {
    appServer.closeAllConnections();
    plain.closeAllConnections();
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One download read to its end; its seconds. */
function download(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    http
      .get({ host: '127.0.0.1', port, path: '/file', agent }, (response) => {
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        response.on('end', () => {
          if (response.statusCode !== 200 || bytes !== sizeBytes) {
            reject(new Error(`download: HTTP ${response.statusCode}, ${bytes} bytes`));
          } else resolve((performance.now() - started) / 1000);
        });
        response.on('error', reject);
      })
      .on('error', reject);
  });
}

function memoryOf(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/memory' }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () => resolve((JSON.parse(text) as { bytes: number }).bytes));
      })
      .on('error', reject);
  });
}

/** Memory the server holds per client that took the headers and then stopped reading. */
async function heldPerPausedClient(port: number): Promise<number> {
  const before = await memoryOf(port);
  const requests: http.ClientRequest[] = [];
  await Promise.all(
    Array.from(
      { length: pausedClients },
      () =>
        new Promise<void>((resolve, reject) => {
          const request = http.get({ host: '127.0.0.1', port, path: '/file' }, (response) => {
            response.pause();
            resolve();
          });
          request.on('error', () => {});
          request.once('error', reject);
          requests.push(request);
        }),
    ),
  );
  // Time for the server to fill every socket's buffers and stop on backpressure.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const during = await memoryOf(port);
  for (const request of requests) request.destroy();
  return Math.max(0, during - before) / pausedClients;
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      text += chunk;
      const end = text.indexOf('\n');
      if (end !== -1) resolve(text.slice(0, end));
    });
    child.on('exit', () =>
      reject(new Error('the download servers ended before printing their ports')),
    );
  });
}

/** Prints MB/s of the server's download path and of a plain pipe, their ratio, memory per paused client. */
export async function benchDownload(): Promise<void> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', __filename], {
    cwd: root,
    env: { ...process.env, BENCH_DOWNLOAD_ROLE: 'servers' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const [appPort, plainPort] = (await firstLine(child)).split(' ').map(Number) as [
      number,
      number,
    ];
    // A warm-up of each, then alternating rounds so that load on the machine hits both alike.
    await download(appPort);
    await download(plainPort);
    const app: number[] = [];
    const plain: number[] = [];
    for (let i = 0; i < rounds; i++) {
      app.push(await download(appPort));
      plain.push(await download(plainPort));
    }
    const mbps = (seconds: number) => sizeBytes / 1024 / 1024 / seconds;
    const appRate = mbps(median(app));
    const plainRate = mbps(median(plain));
    const held = await heldPerPausedClient(appPort);
    const lines = [
      `download: 50 MB file, server in a child process, one keep-alive client, median of ${rounds} rounds`,
      `download: server path (serveApp + fileResponse) ${appRate.toFixed(0)} MB/s; plain fs.createReadStream().pipe(res) ${plainRate.toFixed(0)} MB/s`,
      `download: ratio server/plain ${(appRate / plainRate).toFixed(2)} (target >= 0.8: ${appRate / plainRate >= 0.8 ? 'met' : 'NOT MET (compare the load average: a busy machine slows the server side first)'})`,
      `download: ${pausedClients} paused clients: ${(held / 1024).toFixed(0)} KiB held per client by the server (target < 1024 KiB)`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    agent.destroy();
    child.kill('SIGTERM');
  }
}

if (role === 'servers') {
  runServers().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : error}\n`);
    process.exit(1);
  });
} else if (process.argv[1] && path.resolve(process.argv[1]) === __filename) {
  void benchDownload();
}
