import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { median, printColumns } from './figures';

/**
 * Start-up bench: the built server (`node … server/dist/main.js` with the flags of `npm start`,
 * read from package.json) started BENCH_STARTS times (5) on a temporary DATA_DIR and 127.0.0.1
 * with a free port, against a bare Hono app on @hono/node-server as the reference:
 * - first answer: from spawn to the first 200 on `GET /health`;
 * - idle RSS: resident memory BENCH_IDLE_MS (1,500 ms) after that answer, nothing requested.
 * Two server rows: the first start on a new DATA_DIR (migrations, demo tenant) and a restart on
 * the same DATA_DIR. Medians, with ratios to the reference. Prints figures only; asserts nothing.
 * The environment is only PATH, HOST, PORT, APP_ENV, LOG_LEVEL and DATA_DIR: no DATABASE_URL, no
 * FILE_STORE (the single-host default). BENCH_STARTUP_BEFORE names another checkout whose server
 * is built (`node scripts/build.mjs` there) and started the same way, interleaved: two more rows
 * and a ratio of this checkout to it (single-host start-up and memory, before/after a change).
 * Runs alone with `node --import tsx scripts/bench/startup.ts`.
 */

const root = path.resolve(__dirname, '..', '..');
const starts = Number(process.env.BENCH_STARTS || 5);
const idleMs = Number(process.env.BENCH_IDLE_MS || 1500);
const before = process.env.BENCH_STARTUP_BEFORE
  ? path.resolve(process.env.BENCH_STARTUP_BEFORE)
  : undefined;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

function healthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/health' }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode === 200));
    });
    request.on('error', () => resolve(false));
  });
}

/** Resident set size in MB, read the way `ps` does on Linux. */
function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  return kb / 1024;
}

interface Sample {
  firstAnswerMs: number;
  rssMb: number;
}

async function measure(
  args: string[],
  env: Record<string, string>,
  cwd: string = root,
): Promise<Sample> {
  const port = await freePort();
  const began = performance.now();
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  try {
    let answered = false;
    while (!answered) {
      if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited (${child.exitCode})`);
      if (performance.now() - began > 30_000)
        throw new Error(`${args.join(' ')}: no answer in 30 s`);
      answered = await healthy(port);
      if (!answered) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const firstAnswerMs = performance.now() - began;
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    return { firstAnswerMs, rssMb: rssMb(child.pid!) };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

/** The Node arguments of `npm start` (package.json), so the bench starts what operators start. */
export function startArguments(): string[] {
  const scripts = (
    JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  const [command, ...args] = scripts.start!.split(/\s+/);
  if (command !== 'node') throw new Error(`npm start runs ${command}, not node`);
  return args;
}

export async function benchStartup(): Promise<void> {
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], {
    cwd: root,
    stdio: 'inherit',
  });
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-bench-startup-'));
  try {
    // The reference: the same framework and adapter with one route, nothing else.
    const bare = path.join(scratch, 'bare.cjs');
    fs.writeFileSync(
      bare,
      `const { Hono } = require(${JSON.stringify(require.resolve('hono'))});
const { serve } = require(${JSON.stringify(require.resolve('@hono/node-server'))});
const app = new Hono();
app.get('/health', (c) => c.json({ status: 'ok' }));
serve({ fetch: app.fetch, hostname: '127.0.0.1', port: Number(process.env.PORT) });
`,
    );
    const server = startArguments();
    const env = { APP_ENV: 'development', LOG_LEVEL: 'warn' };
    const rows: Array<{ name: string; samples: Sample[]; versus?: number }> = [
      { name: 'bare Hono app (reference)', samples: [] },
      { name: 'server, new DATA_DIR', samples: [] },
      { name: 'server, restart', samples: [] },
    ];
    if (before) {
      execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], {
        cwd: before,
        stdio: 'inherit',
      });
      rows.push(
        { name: `before (${before}), new DATA_DIR`, samples: [] },
        { name: `before (${before}), restart`, samples: [] },
      );
      rows[1]!.versus = 3;
      rows[2]!.versus = 4;
    }
    // Interleaved, so a change in the machine's load touches every row alike.
    for (let run = 0; run < starts; run += 1) {
      rows[0]!.samples.push(await measure([bare], {}));
      const dataDir = path.join(scratch, `data-${run}`);
      rows[1]!.samples.push(await measure(server, { ...env, DATA_DIR: dataDir }));
      rows[2]!.samples.push(await measure(server, { ...env, DATA_DIR: dataDir }));
      if (before) {
        const beforeDir = path.join(scratch, `before-${run}`);
        rows[3]!.samples.push(await measure(server, { ...env, DATA_DIR: beforeDir }, before));
        rows[4]!.samples.push(await measure(server, { ...env, DATA_DIR: beforeDir }, before));
      }
    }
    const medians = rows.map(({ samples }) => ({
      ms: median(samples.map((sample) => sample.firstAnswerMs)),
      mb: median(samples.map((sample) => sample.rssMb)),
    }));
    const reference = medians[0]!;
    const table = [
      [
        `start (median of ${starts})`,
        'first answer',
        'ratio',
        'idle RSS',
        'ratio',
        ...(before ? ['vs before: time', 'RSS'] : []),
      ],
      ...rows.map(({ name, versus }, index) => {
        const { ms, mb } = medians[index]!;
        const earlier = versus === undefined ? undefined : medians[versus]!;
        return [
          name,
          `${ms.toFixed(0)} ms`,
          `${(ms / reference.ms).toFixed(2)}x`,
          `${mb.toFixed(1)} MB`,
          `${(mb / reference.mb).toFixed(2)}x`,
          ...(before
            ? earlier
              ? [`${(ms / earlier.ms).toFixed(2)}x`, `${(mb - earlier.mb).toFixed(1)} MB`]
              : ['', '']
            : []),
        ];
      }),
    ];
    process.stdout.write(
      `Start-up: ${process.version}, ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(1)}; idle ${idleMs} ms before RSS.\n`,
    );
    printColumns(table);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

if (require.main === module) {
  benchStartup().catch((error: unknown) => {
    process.stderr.write(
      `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}
