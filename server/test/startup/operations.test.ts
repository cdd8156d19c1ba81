import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { appendRunLog } from '../../../test/support/runLog';
import { sample } from '../operations/prometheus';
import { builtServerSuite, freePort, repoRoot } from './builtServer';

/**
 * What an operator's probes and Prometheus see of the built server (docs/operations.md), and
 * how it refuses to start: one line on stderr, exit code 1, nothing written.
 */

jest.setTimeout(120_000);

const metricsToken = 'ops-test-token-0123456789abcdef';

describe('operations endpoints of the built server', () => {
  const { newDataDir, start } = builtServerSuite();

  const get = (port: number, target: string, headers: Record<string, string> = {}) =>
    fetch(`http://127.0.0.1:${port}${target}`, { headers });

  it('/healthz and /health answer 200 {status: ok}; /readyz 200 with each check ok', async () => {
    const server = await start({ DATA_DIR: newDataDir(), APP_ENV: 'development' });
    for (const target of ['/healthz', '/health']) {
      const live = await get(server.port, target);
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ status: 'ok' });
    }
    const ready = await get(server.port, '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.headers.get('cache-control')).toBe('no-store');
    // No TSA_URL in development: the development TSA is in-process, nothing to reach.
    expect(await ready.json()).toEqual({
      status: 'ready',
      checks: { database: 'ok', fileStore: 'ok', keyStore: 'ok' },
    });
  });

  it('/readyz answers 503 naming the file store while it cannot take a file (its temp directory made a file), and 200 again once repaired', async () => {
    // Root ignores file modes: a regular file where a directory must be fails for anyone.
    const dataDir = newDataDir();
    const server = await start({ DATA_DIR: dataDir, APP_ENV: 'development' });
    expect((await get(server.port, '/readyz')).status).toBe(200);
    const tempDir = path.join(dataDir, 'files', 'tmp');
    fs.rmSync(tempDir, { recursive: true, force: true });
    fs.writeFileSync(tempDir, 'not a directory');
    try {
      const refused = await get(server.port, '/readyz');
      expect(refused.status).toBe(503);
      const text = await refused.text();
      expect(JSON.parse(text)).toEqual({
        status: 'not_ready',
        checks: { database: 'ok', fileStore: 'failed', keyStore: 'ok' },
      });
      // Which check, never why: no path, no error text.
      expect(text).not.toContain(dataDir);
      expect(text).not.toMatch(/ENOTDIR|EEXIST|tmp/);
      // Liveness is not readiness: the process still answers.
      expect((await get(server.port, '/healthz')).status).toBe(200);
    } finally {
      fs.rmSync(tempDir, { force: true });
      fs.mkdirSync(tempDir, { mode: 0o700 });
    }
    expect((await get(server.port, '/readyz')).status).toBe(200);
    // The reason is in the server's log, for the operator.
    expect(server.stdout()).toContain('"check":"fileStore"');
  });

  it('production: /readyz asks the TSA at TSA_URL (any HTTP answer counts) and answers 503 naming it when it cannot be reached', async () => {
    const asked: string[] = [];
    const tsa = http.createServer((request, response) => {
      asked.push(`${request.method} ${request.url}`);
      // As a TSA answers a GET: not a timestamp request.
      response.writeHead(405).end();
    });
    await new Promise<void>((resolve) => tsa.listen(0, '127.0.0.1', resolve));
    const tsaPort = (tsa.address() as net.AddressInfo).port;
    try {
      const reachable = await start({
        DATA_DIR: newDataDir(),
        APP_ENV: 'production',
        TSA_URL: `http://127.0.0.1:${tsaPort}/tsa`,
        OUTBOUND_ALLOWLIST: '127.0.0.1',
      });
      const ready = await get(reachable.port, '/readyz');
      expect(await ready.json()).toEqual({
        status: 'ready',
        checks: { database: 'ok', fileStore: 'ok', keyStore: 'ok', tsa: 'ok' },
      });
      expect(ready.status).toBe(200);
      // One GET, no timestamp request: nothing a paid TSA would bill.
      expect(asked).toEqual(['GET /tsa']);
    } finally {
      await new Promise((resolve) => tsa.close(resolve));
    }
    // Nothing listens there any more.
    const unreachable = await start({
      DATA_DIR: newDataDir(),
      APP_ENV: 'production',
      TSA_URL: `http://127.0.0.1:${tsaPort}/tsa`,
      OUTBOUND_ALLOWLIST: '127.0.0.1',
    });
    const refused = await get(unreachable.port, '/readyz');
    expect(refused.status).toBe(503);
    const text = await refused.text();
    expect(JSON.parse(text)).toEqual({
      status: 'not_ready',
      checks: { database: 'ok', fileStore: 'ok', keyStore: 'ok', tsa: 'failed' },
    });
    expect(text).not.toContain(String(tsaPort));
  });

  it('/metrics: 404 while METRICS_TOKEN is unset; 401 without the token or with another; the Prometheus text with it', async () => {
    const off = await start({ DATA_DIR: newDataDir(), APP_ENV: 'development' });
    const absent = await get(off.port, '/metrics', { authorization: `Bearer ${metricsToken}` });
    expect(absent.status).toBe(404);
    expect(((await absent.json()) as { code: string }).code).toBe('NOT_FOUND');

    const on = await start({
      DATA_DIR: newDataDir(),
      APP_ENV: 'development',
      METRICS_TOKEN: metricsToken,
    });
    for (const authorization of [
      undefined,
      `Bearer ${metricsToken}x`,
      `Bearer ${metricsToken.slice(0, -1)}`,
      `Basic ${metricsToken}`,
      metricsToken,
    ]) {
      const refused = await get(on.port, '/metrics', authorization ? { authorization } : {});
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      const body = await refused.text();
      expect(JSON.parse(body).code).toBe('UNAUTHORIZED');
      expect(body).not.toContain(metricsToken.slice(4, 20));
    }
    const scraped = await get(on.port, '/metrics', { authorization: `Bearer ${metricsToken}` });
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await scraped.text();
    for (const name of [
      'esign_http_requests_total',
      'esign_http_request_duration_seconds',
      'esign_signatures_total',
      'esign_otp_failures_total',
      'esign_pdf_refusals_total',
      'esign_job_failures_total',
      'esign_jobs_pending',
      'esign_jobs_failed',
      'esign_process_resident_memory_bytes',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    // The daily file store sweep is scheduled at start: one pending job of its kind.
    expect(sample(text, 'esign_jobs_pending', { kind: 'storage.sweep' })).toBe(1);
    expect(sample(text, 'esign_jobs_failed', { kind: 'storage.sweep' })).toBe(0);
  });

  it('requests are counted by route pattern and status, never by raw path; a PDF refused is counted by its code', async () => {
    const server = await start({
      DATA_DIR: newDataDir(),
      APP_ENV: 'development',
      METRICS_TOKEN: metricsToken,
    });
    const scrape = async () =>
      (await get(server.port, '/metrics', { authorization: `Bearer ${metricsToken}` })).text();
    const secretish = 'c0ffee-7a1b-4e2d-9f00-000000000042';
    const route = { method: 'GET', route: '/api/contracts/:id', status: '401' };
    const before = sample(await scrape(), 'esign_http_requests_total', route) ?? 0;
    for (let i = 0; i < 3; i++) {
      expect((await get(server.port, `/api/contracts/${secretish}`)).status).toBe(401);
    }
    const after = await scrape();
    expect(sample(after, 'esign_http_requests_total', route)).toBe(before + 3);
    expect(
      sample(after, 'esign_http_request_duration_seconds_count', route),
    ).toBeGreaterThanOrEqual(3);
    expect(after).not.toContain(secretish);

    // The verification page refuses a file that is not a PDF (415 NOT_A_PDF).
    const form = new FormData();
    form.append('file', new Blob(['plain text, no PDF']), 'note.pdf');
    const refused = await fetch(`http://127.0.0.1:${server.port}/app/xac-thuc`, {
      method: 'POST',
      body: form,
    });
    expect(refused.status).toBe(415);
    expect(sample(await scrape(), 'esign_pdf_refusals_total', { code: 'NOT_A_PDF' })).toBe(1);
  });
});

interface Exited {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built server until it exits on its own (10 s at most: it must not start). */
function runToExit(env: Record<string, string>): Promise<Exited> {
  const child = spawn(process.execPath, ['--enable-source-maps', 'server/dist/main.js'], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    appendRunLog('built-server', chunk);
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    appendRunLog('built-server', chunk);
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      // Let the pipes drain.
      setImmediate(() => resolve({ code, stdout, stderr }));
    });
  });
}

describe('start-up refusals of the built server', () => {
  const { newDataDir } = builtServerSuite();

  function expectOneLine(exited: Exited, pattern: RegExp): void {
    expect(exited.code).toBe(1);
    expect(exited.stdout).toBe('');
    const lines = exited.stderr.split('\n').filter((line) => line !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(pattern);
    expect(exited.stderr).not.toMatch(/\n\s+at /);
  }

  it('a port in use: one line, exit 1, and DATA_DIR untouched (no demo tenant, no database)', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    const dataDir = newDataDir();
    try {
      const exited = await runToExit({
        PORT: String(port),
        DATA_DIR: dataDir,
        APP_ENV: 'development',
      });
      expectOneLine(
        exited,
        new RegExp(
          `^Cannot start: PORT ${port} is already in use on 127\\.0\\.0\\.1: stop what listens there or set another PORT$`,
        ),
      );
      // Not even the master key or the database file: nothing was written.
      expect(fs.readdirSync(dataDir)).toEqual([]);
      // A DATA_DIR that does not exist yet is not even created.
      const fresh = path.join(dataDir, 'fresh');
      expect((await runToExit({ PORT: String(port), DATA_DIR: fresh })).code).toBe(1);
      expect(fs.existsSync(fresh)).toBe(false);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it.each([
    ['abc', /^Cannot start: PORT must be a positive integer, got "abc"$/],
    ['70000', /^Cannot start: PORT must be a port number from 1 to 65535, got "70000"$/],
    ['-1', /^Cannot start: PORT must be a positive integer, got "-1"$/],
    ['0', /^Cannot start: PORT must be a positive integer, got "0"$/],
  ])('PORT=%s: one line naming PORT, exit 1, nothing written', async (value, pattern) => {
    const dataDir = newDataDir();
    expectOneLine(await runToExit({ PORT: value, DATA_DIR: dataDir }), pattern);
    expect(fs.readdirSync(dataDir)).toEqual([]);
  });

  it('a DATA_DIR that cannot be made (under a regular file): one line naming it, exit 1', async () => {
    // Root may write anywhere; nobody can make a directory under a regular file.
    const parent = newDataDir();
    const file = path.join(parent, 'a-file');
    fs.writeFileSync(file, 'not a directory');
    const dataDir = path.join(file, 'data');
    const exited = await runToExit({ PORT: String(await freePort()), DATA_DIR: dataDir });
    expectOneLine(
      exited,
      /^Cannot start: DATA_DIR .*\/a-file\/data is not a writable directory \(ENOTDIR: a part of the path is a file\)$/,
    );
    expect(fs.readdirSync(parent)).toEqual(['a-file']);
  });

  it('a DATA_DIR that is a regular file: one line naming it, exit 1', async () => {
    const parent = newDataDir();
    const file = path.join(parent, 'data');
    fs.writeFileSync(file, 'not a directory');
    const exited = await runToExit({ PORT: String(await freePort()), DATA_DIR: file });
    expectOneLine(
      exited,
      /^Cannot start: DATA_DIR .*\/data is not a writable directory \(E\w+: .+\)$/,
    );
    expect(fs.readFileSync(file, 'utf8')).toBe('not a directory');
  });
});
