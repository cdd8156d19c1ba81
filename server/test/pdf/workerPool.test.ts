import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { statusOfCode } from '../../src/http/errorStatuses';
import { EngineError } from '../../src/pdf/engineError';
import { defaultPdfLimits } from '../../src/pdf/signing/budget';
import { defaultPdfPoolOptions, PdfWorkerPool } from '../../src/pdf/worker/pool';
import {
  inspectPdfTask,
  prepareUpdateTask,
  readDssTask,
  readSignaturesTask,
} from '../../src/pdf/worker/tasks';
import { classicPdf } from '../signing/pdf/corpus';
import { hugeXrefStream, objectStreamBomb, zeroWidthXrefStream } from './hostilePdfs';

/**
 * The PDF worker pool on its own: tasks run in worker threads (compiled by tsx here, bundled in
 * `npm start`), results come back as this thread's types, errors keep their codes, and a
 * worker that passes its time or heap limit is replaced while its task gets 422.
 */

jest.setTimeout(120_000);

let dir: string;
const pools: PdfWorkerPool[] = [];
const pool = (options: Partial<typeof defaultPdfPoolOptions> = {}) => {
  const made = new PdfWorkerPool({ ...defaultPdfPoolOptions, ...options });
  pools.push(made);
  return made;
};
const write = (name: string, bytes: Buffer) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  return file;
};

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-pdf-pool-'));
});
afterAll(async () => {
  await Promise.all(pools.map((made) => made.close()));
  fs.rmSync(dir, { recursive: true, force: true });
});

async function failure(promise: Promise<unknown>): Promise<EngineError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(EngineError);
  return error as EngineError;
}

describe('the PDF worker pool', () => {
  it('runs a task in a worker and hands back Buffers and Dates of this thread', async () => {
    const file = write('one.pdf', await classicPdf(2));
    const workers = pool({ size: 1 });
    const report = await workers.run(readSignaturesTask, [file]);
    expect(report.fileSize).toBe(fs.statSync(file).size);
    expect(report.revisions).toHaveLength(1);
    expect(workers.size).toBe(1);
    const dss = await workers.run(readDssTask, [file]);
    expect(dss).toEqual({ certificates: [], ocspResponses: [], crls: [] });
    const inspection = await workers.run(inspectPdfTask, [file]);
    expect(inspection).toEqual({ signatures: 0, activeContent: [] });
    const prepared = await workers.run(prepareUpdateTask, [
      file,
      { signingTime: new Date('2026-11-25T08:00:00Z'), contentsSize: 64 },
      undefined,
    ]);
    expect(Buffer.isBuffer(prepared.update)).toBe(true);
    expect(prepared.update.toString('latin1')).toContain('/M (D:20261125080000Z)');
  });

  it('answers the engine’s refusals with their codes, and keeps the worker', async () => {
    const workers = pool({ size: 1 });
    const zeroWidth = write('zero-width.pdf', zeroWidthXrefStream());
    const error = await failure(workers.run(readSignaturesTask, [zeroWidth]));
    expect([statusOfCode(error.code), error.code]).toEqual([422, 'PDF_UNREADABLE']);
    expect(error.message).toContain('width 0');
    const notPdf = write('not.pdf', Buffer.from('hello'));
    expect((await failure(workers.run(readSignaturesTask, [notPdf]))).code).toBe('NOT_A_PDF');
    expect(workers.size).toBe(1);
  });

  it('stops a read past its time limit with 422 PDF_TOO_COMPLEX; the next task gets a worker', async () => {
    const file = write('long.pdf', await classicPdf(300));
    const workers = pool({ size: 1, graceMs: 0 });
    // 1 ms: the worker's own clock check or the pool's deadline, whichever comes first.
    const error = await failure(workers.run(inspectPdfTask, [file], { timeMs: 1 }));
    expect([statusOfCode(error.code), error.code]).toEqual([422, 'PDF_TOO_COMPLEX']);
    expect(error.message).toMatch(/longer than/);
    expect(await workers.run(inspectPdfTask, [file])).toEqual({ signatures: 0, activeContent: [] });
  });

  it('replaces a worker that runs out of heap; the task gets 422 PDF_TOO_COMPLEX', async () => {
    const file = write('many-entries.pdf', hugeXrefStream(990_000));
    const workers = pool({ size: 1, maxHeapMb: 48 });
    const error = await failure(workers.run(readSignaturesTask, [file]));
    expect([statusOfCode(error.code), error.code]).toEqual([422, 'PDF_TOO_COMPLEX']);
    expect(error.message).toContain('more than 48 MB');
    const small = write('small.pdf', await classicPdf(1));
    expect((await workers.run(readSignaturesTask, [small])).revisions).toHaveLength(1);
  });

  it('reads a file just under the entry limit within the default heap and time', async () => {
    const entries = defaultPdfLimits.xrefEntries - 10;
    const file = write('near-limit.pdf', hugeXrefStream(entries));
    const inspection = await pool({ size: 1 }).run(inspectPdfTask, [file]);
    expect(inspection).toEqual({ signatures: 0, activeContent: [] });
    const over = write('over-limit.pdf', hugeXrefStream(defaultPdfLimits.xrefEntries + 10));
    const error = await failure(pool({ size: 1 }).run(inspectPdfTask, [over]));
    expect(error.message).toContain(`more than ${defaultPdfLimits.xrefEntries} cross-reference`);
  });

  it('refuses a decompression bomb at the structural stream limit', async () => {
    const file = write('bomb.pdf', await objectStreamBomb());
    expect(fs.statSync(file).size).toBeLessThan(300_000);
    const error = await failure(pool({ size: 1 }).run(inspectPdfTask, [file]));
    expect(error.code).toBe('PDF_TOO_COMPLEX');
    expect(error.message).toContain('decodes to more than 16 MiB');
  });

  it('queues at most maxQueue tasks behind busy workers: more is 503 PDF_READER_BUSY', async () => {
    const file = write('queued.pdf', await classicPdf(40));
    const workers = pool({ size: 1, maxQueue: 2 });
    const running = [1, 2, 3].map(() => workers.run(inspectPdfTask, [file]));
    const error = await failure(workers.run(inspectPdfTask, [file]));
    expect([statusOfCode(error.code), error.code, error.retryAfterSeconds]).toEqual([
      503,
      'PDF_READER_BUSY',
      5,
    ]);
    await expect(Promise.all(running)).resolves.toHaveLength(3);
  });

  it('stops every worker on close; waiting tasks fail', async () => {
    const file = write('closing.pdf', await classicPdf(1));
    const workers = pool({ size: 1 });
    await workers.run(inspectPdfTask, [file]);
    await workers.close();
    expect(workers.size).toBe(0);
    await expect(workers.run(inspectPdfTask, [file])).rejects.toThrow('closed');
  });
});
