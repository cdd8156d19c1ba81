import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { databaseEnv } from '../../../test/support/postgres';
import { contractPdf, formOf } from '../contracts/fixtures';
import { objectStreamBomb, zeroWidthXrefStream } from '../pdf/hostilePdfs';
import { builtServerSuite, repoRoot } from './builtServer';

/**
 * The PDF worker threads in the build `npm start` runs: server/dist/main.js starts them from
 * server/dist/pdfWorker.js. An upload is inspected there, a hostile one refused, and the
 * server's own memory stays where it was (the worker's decoding is bounded and its heap its own).
 */

jest.setTimeout(180_000);

const mib = 1024 * 1024;

/** Resident and peak resident set of a process, from /proc. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

describe('the built server reads PDFs in its worker threads', () => {
  const { newDataDir, start } = builtServerSuite();

  it('accepts a PDF, refuses the hostile ones, and does not grow', async () => {
    const dataDir = newDataDir();
    const env = { DATA_DIR: dataDir, APP_ENV: 'development', ...databaseEnv(dataDir) };
    const server = await start(env);
    const created = execFileSync(
      process.execPath,
      [
        'server/dist/cli.js',
        'apikey',
        'create',
        '--tenant',
        'DEMO',
        '--org',
        'DEMO',
        '--user',
        'demo.admin',
        '--json',
      ],
      { cwd: repoRoot, env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' },
    );
    const { key } = JSON.parse(created) as { key: string };
    const upload = async (bytes: Buffer) => {
      const response = await fetch(`http://127.0.0.1:${server.port}/api/contracts`, {
        method: 'POST',
        headers: { 'x-api-key': key },
        body: formOf({ file: { name: 'hop-dong.pdf', bytes } }),
      });
      return { status: response.status, body: (await response.json()) as { code?: string } };
    };

    expect((await upload(await contractPdf('built'))).status).toBe(201);
    const before = memoryOf(server.pid);

    const began = performance.now();
    expect(await upload(zeroWidthXrefStream())).toMatchObject({
      status: 422,
      body: { code: 'PDF_UNREADABLE' },
    });
    expect(performance.now() - began).toBeLessThan(1000);
    const bomb = await upload(await objectStreamBomb());
    expect(bomb).toMatchObject({ status: 422, body: { code: 'PDF_TOO_COMPLEX' } });
    const health = await fetch(`http://127.0.0.1:${server.port}/health`);
    expect(health.status).toBe(200);

    const after = memoryOf(server.pid);
    // The peak since start (the bomb's read included) against the resident set before it.
    expect(after.peak - before.rss).toBeLessThan(64 * mib);
    expect(await server.stop()).toBe(0);
  });
});
