import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { median, printColumns } from './figures';
import { freePort, startArguments } from './startup';

/**
 * The HTTP harness of `npm run bench`: servers in processes of their own, driven from this process
 * with autocannon, each figure beside the same load on a bare Hono JSON route started in the same
 * run. `compareOverHttp` is the one call a bench section makes:
 *
 *   await compareOverHttp('Lookup', server, [{ name: 'GET /documents/{id}', connections: 32,
 *     path: () => `/api/integration/documents/${pick()}`, headers: { 'X-API-Key': key } }]);
 *
 * Every case is run BENCH_HTTP_RUNS times (3) for BENCH_HTTP_SECONDS (5) after a one-second
 * warm-up, alternating with the reference at the same number of connections, and the median run
 * is printed: requests per second, p50 and p99 latency, the server's CPU time per request
 * (/proc/PID/stat), and the ratio of requests per second to the reference.
 */

const root = path.resolve(__dirname, '..', '..');
/** Another checkout's built server to measure instead (a before/after comparison). */
const serverRoot = path.resolve(process.env.BENCH_SERVER_ROOT ?? root);
const runs = Number(process.env.BENCH_HTTP_RUNS || 3);
const seconds = Number(process.env.BENCH_HTTP_SECONDS || 5);

/** A server process listening on 127.0.0.1. */
export interface RunningServer {
  name: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/** One load: requests of `path()` (a new path per request) with `headers`, `connections` at once. */
export interface HttpCase {
  name: string;
  connections: number;
  path: () => string;
  headers?: Record<string, string>;
}

export interface HttpFigures {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  cpuMsPerRequest: number;
  /** Answers other than 2xx, socket errors and timeouts: a figure with these is suspect. */
  unexpected: number;
}

function answers(port: number, url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: url }, (response) => {
      response.resume();
      response.on('end', () => resolve((response.statusCode ?? 500) < 500));
    });
    request.on('error', () => resolve(false));
  });
}

/** Starts `node args` with PORT and HOST set, and waits for `probe` to answer (60 s at most). */
export async function startServer(
  name: string,
  args: string[],
  env: Record<string, string>,
  options: { cwd?: string; probe?: string } = {},
): Promise<RunningServer> {
  const { cwd = root, probe = '/health' } = options;
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  };
  const began = performance.now();
  while (!(await answers(port, probe))) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode})`);
    if (performance.now() - began > 60_000) {
      await stop();
      throw new Error(`${name}: no answer in 60 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { name, port, pid: child.pid!, stop };
}

/**
 * The server as `npm start` runs it (built first when stale), on `env` (DATA_DIR and so on);
 * BENCH_SERVER_ROOT names another checkout to start instead, for a before/after comparison.
 */
export function startProductServer(env: Record<string, string>): Promise<RunningServer> {
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], {
    cwd: serverRoot,
    stdio: 'inherit',
  });
  return startServer(`server (${serverRoot})`, startArguments(), env, { cwd: serverRoot });
}

/**
 * The reference: the same framework and adapter, one route answering a small JSON object.
 * Written into `dir` (removed by the caller) and started like the product.
 */
export function startBareHono(dir: string): Promise<RunningServer> {
  const file = path.join(dir, 'bare-hono.cjs');
  fs.writeFileSync(
    file,
    `const { Hono } = require(${JSON.stringify(require.resolve('hono'))});
const { serve } = require(${JSON.stringify(require.resolve('@hono/node-server'))});
const app = new Hono();
app.get('/health', (c) => c.json({ status: 'ok' }));
app.get('/bare/:id', (c) => c.json({ data: { id: c.req.param('id'), status: 'COMPLETED' } }));
serve({ fetch: app.fetch, hostname: '127.0.0.1', port: Number(process.env.PORT) });
`,
  );
  return startServer('bare Hono', [file], {});
}

/** User plus system CPU time of a process so far, in milliseconds (Linux /proc). */
function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of stat, 12 and 13 after "pid (comm) ".
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** Drives `server` with `load` for `durationSeconds` and returns its figures. */
export function drive(
  server: RunningServer,
  load: HttpCase,
  durationSeconds: number,
): Promise<HttpFigures> {
  return driveSide({ name: server.name, servers: [server] }, load, durationSeconds);
}

function medianRun(figures: HttpFigures[]): HttpFigures {
  const rps = median(figures.map((f) => f.requestsPerSecond));
  const chosen = figures.find((f) => f.requestsPerSecond === rps) ?? figures[0]!;
  return {
    ...chosen,
    requestsPerSecond: rps,
    p50: median(figures.map((f) => f.p50)),
    p99: median(figures.map((f) => f.p99)),
    cpuMsPerRequest: median(figures.map((f) => f.cpuMsPerRequest)),
    unexpected: Math.max(...figures.map((f) => f.unexpected)),
  };
}

export interface ComparedCase {
  name: string;
  figures: HttpFigures;
  reference: HttpFigures;
}

/**
 * Runs each case against `server` and, at the same connections, the bare Hono reference (started
 * and stopped here), then prints one table. Returns the figures for a caller that checks targets.
 */
export async function compareOverHttp(
  title: string,
  server: RunningServer,
  cases: HttpCase[],
): Promise<ComparedCase[]> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-bench-http-'));
  const bare = await startBareHono(scratch);
  const references = new Map<number, HttpFigures[]>();
  const measured = new Map<HttpCase, HttpFigures[]>();
  try {
    const reference = (connections: number): HttpCase => {
      let n = 0;
      const path = () => {
        n += 1;
        return `/bare/${n}`;
      };
      return { name: 'bare', connections, path };
    };
    // Warm both (JIT, caches, SQLite pages) before anything counts.
    for (const load of cases) await drive(server, load, 1);
    for (const connections of new Set(cases.map((load) => load.connections))) {
      await drive(bare, reference(connections), 1);
    }
    // Alternating, so a change in the machine's load touches both sides alike.
    for (let run = 0; run < runs; run += 1) {
      for (const load of cases) {
        if (!references.has(load.connections) || references.get(load.connections)!.length <= run) {
          const list = references.get(load.connections) ?? [];
          list.push(await drive(bare, reference(load.connections), seconds));
          references.set(load.connections, list);
        }
        const list = measured.get(load) ?? [];
        list.push(await drive(server, load, seconds));
        measured.set(load, list);
      }
    }
  } finally {
    await bare.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  const compared = cases.map((load) => ({
    name: `${load.name} (${load.connections} conn.)`,
    figures: medianRun(measured.get(load)!),
    reference: medianRun(references.get(load.connections)!),
  }));
  const row = (name: string, f: HttpFigures, ratio: string) => [
    name,
    f.requestsPerSecond.toFixed(0),
    `${f.p50.toFixed(1)} ms`,
    `${f.p99.toFixed(1)} ms`,
    `${f.cpuMsPerRequest.toFixed(3)} ms`,
    ratio,
    String(f.unexpected),
  ];
  const table = [['', 'req/s', 'p50', 'p99', 'CPU/req', 'vs bare', 'not 2xx']];
  for (const [connections, list] of references) {
    table.push(row(`bare Hono JSON route (${connections} conn.)`, medianRun(list), '1'));
  }
  for (const each of compared) {
    const ratio = each.figures.requestsPerSecond / each.reference.requestsPerSecond;
    table.push(row(each.name, each.figures, `${(ratio * 100).toFixed(1)}%`));
  }
  process.stdout.write(
    `${title}: over HTTP from a second process (autocannon), median of ${runs} runs of ${seconds} s; ${process.version}, ${os.cpus().length}× ${os.cpus()[0]?.model ?? 'CPU'}, load ${os.loadavg()[0]!.toFixed(2)}.\n`,
  );
  printColumns(table);
  return compared;
}

/**
 * One side of a comparison between deployments (scripts/bench/scaleOut.ts): one server, or
 * several sharing the load (each gets an equal part of the connections, from its own autocannon
 * in this process), and the CPU time of processes that serve them besides (PostgreSQL's).
 */
export interface Side {
  name: string;
  servers: RunningServer[];
  /** CPU milliseconds so far of the processes behind the servers (a database), if any. */
  backendCpuMs?: () => number;
  /** The side whose requests per second this one's are divided by, in the "ratio" column. */
  versus?: string;
  /** Headers of this side's requests, over the load's (its own API key). */
  headers?: Record<string, string>;
}

export interface SideFigures extends HttpFigures {
  backendCpuMsPerRequest: number;
}

/** Drives every server of `side` at once (the connections split evenly) and sums their figures. */
export async function driveSide(
  side: Side,
  load: HttpCase,
  durationSeconds: number,
): Promise<SideFigures> {
  const servers = side.servers;
  const cpu = () => servers.reduce((sum, server) => sum + cpuMs(server.pid), 0);
  const [cpuBefore, backendBefore] = [cpu(), side.backendCpuMs?.() ?? 0];
  // Every answer's time, so that percentiles over several servers are exact.
  const times: number[] = [];
  const results = await Promise.all(
    servers.map(
      (server, index) =>
        new Promise<autocannon.Result>((resolve, reject) => {
          const share = Math.floor(load.connections / servers.length);
          const instance = autocannon(
            {
              url: `http://127.0.0.1:${server.port}`,
              connections: share + (index < load.connections % servers.length ? 1 : 0),
              duration: durationSeconds,
              headers: { ...load.headers, ...side.headers },
              requests: [
                { method: 'GET', setupRequest: (request) => ({ ...request, path: load.path() }) },
              ],
            },
            (error, result) => (error ? reject(error) : resolve(result)),
          );
          instance.on('response', (_client, _status, _bytes, ms) => {
            times.push(ms);
          });
        }),
    ),
  );
  const cpuSpent = cpu() - cpuBefore;
  const backendSpent = (side.backendCpuMs?.() ?? 0) - backendBefore;
  const total = results.reduce((sum, result) => sum + result.requests.total, 0);
  times.sort((a, b) => a - b);
  const at = (fraction: number) =>
    times.length === 0
      ? 0
      : times[Math.min(times.length - 1, Math.floor(times.length * fraction))]!;
  return {
    requestsPerSecond: total / durationSeconds,
    p50: at(0.5),
    p99: at(0.99),
    cpuMsPerRequest: total > 0 ? cpuSpent / total : 0,
    backendCpuMsPerRequest: total > 0 ? backendSpent / total : 0,
    unexpected: results.reduce(
      (sum, result) => sum + result.non2xx + result.errors + result.timeouts,
      0,
    ),
  };
}

/**
 * Runs `load` on every side and, at the same total connections, on the bare Hono reference
 * (started and stopped here), alternating BENCH_HTTP_RUNS times; prints one table of medians with
 * each side's ratio to the bare route and to the side it names in `versus`. Returns the medians.
 */
export async function compareSides(
  title: string,
  load: HttpCase,
  sides: Side[],
): Promise<Map<string, SideFigures>> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-bench-sides-'));
  const bare = await startBareHono(scratch);
  let n = 0;
  const bareLoad: HttpCase = {
    name: 'bare',
    connections: load.connections,
    path: () => {
      n += 1;
      return `/bare/${n}`;
    },
  };
  const reference: Side = { name: 'bare Hono JSON route', servers: [bare] };
  const all = [reference, ...sides];
  const samples = new Map<Side, SideFigures[]>(all.map((side) => [side, []]));
  try {
    for (const side of all) await driveSide(side, side === reference ? bareLoad : load, 1);
    for (let run = 0; run < runs; run += 1) {
      for (const side of all) {
        samples
          .get(side)!
          .push(await driveSide(side, side === reference ? bareLoad : load, seconds));
      }
    }
  } finally {
    await bare.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  const medians = new Map<string, SideFigures>();
  for (const [side, list] of samples) {
    medians.set(side.name, {
      ...medianRun(list),
      backendCpuMsPerRequest: median(list.map((f) => f.backendCpuMsPerRequest)),
    });
  }
  const bareRps = medians.get(reference.name)!.requestsPerSecond;
  const table = [
    [
      '',
      'req/s',
      'p50',
      'p99',
      'CPU/req server',
      'CPU/req PostgreSQL',
      'vs bare',
      'ratio',
      'not 2xx',
    ],
  ];
  for (const side of all) {
    const f = medians.get(side.name)!;
    const versus = side.versus === undefined ? undefined : medians.get(side.versus);
    table.push([
      side.servers.length > 1 ? `${side.name} (${side.servers.length} servers)` : side.name,
      f.requestsPerSecond.toFixed(0),
      `${f.p50.toFixed(1)} ms`,
      `${f.p99.toFixed(1)} ms`,
      `${f.cpuMsPerRequest.toFixed(3)} ms`,
      side.backendCpuMs ? `${f.backendCpuMsPerRequest.toFixed(3)} ms` : '-',
      side === reference ? '1' : `${((f.requestsPerSecond / bareRps) * 100).toFixed(1)}%`,
      versus
        ? `${(f.requestsPerSecond / versus.requestsPerSecond).toFixed(2)}x ${side.versus}`
        : '',
      String(f.unexpected),
    ]);
  }
  process.stdout.write(
    `${title}: ${load.connections} connections in all, over HTTP from a second process (autocannon), median of ${runs} runs of ${seconds} s; ${process.version}, ${os.cpus().length}× ${os.cpus()[0]?.model ?? 'CPU'}, load ${os.loadavg()[0]!.toFixed(2)}.\n`,
  );
  printColumns(table);
  return medians;
}
