import type http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { defaultPdfLimits } from '../../src/pdf/signing/budget';
import { serveApp } from '../../src/serve';
import {
  type ContractWorld,
  contractPdf,
  contractRows,
  contractsPath,
  formOf,
  openContractWorld,
  storedFiles,
  tempFiles,
} from '../contracts/fixtures';
import {
  deepNesting,
  documentScript,
  embeddedExecutable,
  hugeXrefStream,
  javaScriptAndLaunch,
  launchOnly,
  lengthLoop,
  objectStreamBomb,
  overlongXrefTable,
  selfContainedObjectStream,
  selfLength,
  webLink,
  zeroWidthXrefStream,
} from './hostilePdfs';

/**
 * Hostile PDFs uploaded as contracts through the API, on a server listening on 127.0.0.1: each
 * is refused with a clear 422 while the event loop stays free (the reads run in the PDF worker
 * threads), the process does not grow, and nothing is left behind.
 *
 * Bounds, generous for a loaded 2-core CI machine: a hostile upload answers within 1 s; `/health`
 * answers within 200 ms while one is read, and the event loop is never held as long (a file
 * that takes seconds in a worker delays it by what the scheduler of a loaded machine does);
 * the decompression bomb (256 MiB inflated) raises the process's resident set by less than
 * 64 MiB at its peak.
 */

jest.setTimeout(180_000);

const mib = 1024 * 1024;
let world: ContractWorld;
let server: http.Server;
let origin: string;

beforeAll(async () => {
  world = await openContractWorld();
  const listening = new Promise<number>((resolve) => {
    server = serveApp(
      world.h.app.fetch,
      { hostname: '127.0.0.1', port: 0, logger: world.h.deps.logger },
      ({ port }) => resolve(port),
    );
  });
  origin = `http://127.0.0.1:${await listening}`;
  // A first upload starts the PDF worker (compiled by tsx here): what follows is measured warm.
  expect((await upload(await contractPdf('warm-up'))).status).toBe(201);
});
afterAll(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await world?.close();
});

function upload(bytes: Buffer, fields: Record<string, string> = {}): Promise<Response> {
  return fetch(`${origin}${contractsPath}`, {
    method: 'POST',
    headers: { 'x-api-key': world.acme.orgKey },
    body: formOf({ file: { name: 'hop-dong.pdf', bytes }, fields }),
  });
}

interface Watch {
  /** Stops watching: `/health` latencies (ms) and the event loop's longest delay (ms). */
  stop(): Promise<{ health: number[]; loopDelayMs: number }>;
}

/** Asks `/health` over the socket one request after another, and watches the event loop. */
function watchHealth(): Watch {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  const health: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const began = performance.now();
      const response = await fetch(`${origin}/health`);
      await response.text();
      health.push(performance.now() - began);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      histogram.disable();
      return { health, loopDelayMs: histogram.max / 1e6 };
    },
  };
}

/** Runs `work` while `/health` is asked; at least `minMs` long, so some answers are measured. */
async function whileWatched<T>(work: () => Promise<T>, minMs = 300) {
  const watch = watchHealth();
  const began = performance.now();
  const result = await work();
  const ms = performance.now() - began;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, minMs - ms)));
  return { result, ms, ...(await watch.stop()) };
}

async function refusal(response: Response) {
  const body = (await response.json()) as {
    code: string;
    message: string;
    details?: { field?: string };
  };
  return { status: response.status, ...body };
}

describe('hostile PDF uploads', () => {
  it('the audit’s 674-byte PDF (xref stream, /W [0 0 0], huge /Index): 422 within 1 s, /health answering', async () => {
    const bytes = zeroWidthXrefStream();
    expect(bytes.length).toBe(674);
    const before = await contractRows(world.h);
    const watched = await whileWatched(async () => refusal(await upload(bytes)));
    expect(watched.result).toMatchObject({ status: 422, code: 'PDF_UNREADABLE' });
    expect(watched.result.message).toContain('width 0');
    expect(watched.ms).toBeLessThan(1000);
    expect(watched.health.length).toBeGreaterThan(0);
    expect(Math.max(...watched.health)).toBeLessThan(200);
    expect(watched.loopDelayMs).toBeLessThan(200);
    expect(await contractRows(world.h)).toEqual(before);
  });

  it('a file that takes a while to read (half a million xref entries) never holds the event loop', async () => {
    const bytes = hugeXrefStream(defaultPdfLimits.xrefEntries / 2);
    const watched = await whileWatched(async () => (await upload(bytes)).status);
    // Accepted: within every limit, just slow. Meanwhile the server answered as usual.
    expect(watched.result).toBe(201);
    expect(watched.health.length).toBeGreaterThan(3);
    expect(Math.max(...watched.health)).toBeLessThan(200);
    expect(watched.loopDelayMs).toBeLessThan(200);
  });

  it('a 261 KB object stream inflating to 256 MiB: 422 PDF_TOO_COMPLEX, the process grows < 64 MiB', async () => {
    const bytes = await objectStreamBomb();
    expect(bytes.length).toBeLessThan(270_000);
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 2);
    const watched = await whileWatched(async () => refusal(await upload(bytes)));
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    expect(watched.result).toMatchObject({ status: 422, code: 'PDF_TOO_COMPLEX' });
    expect(watched.result.message).toContain('decodes to more than 16 MiB');
    expect(watched.ms).toBeLessThan(1000);
    expect(Math.max(...watched.health)).toBeLessThan(200);
    expect(peak - baseline).toBeLessThan(64 * mib);
  });

  it.each([
    ['arrays nested 10,000 deep', () => deepNesting(), 'PDF_TOO_COMPLEX', 'nested more than 100'],
    [
      'an xref stream of three million entries',
      () => hugeXrefStream(3_000_000),
      'PDF_TOO_COMPLEX',
      'more than 1000000 cross-reference entries',
    ],
    [
      'an xref table claiming five million entries',
      () => overlongXrefTable(),
      'PDF_UNREADABLE',
      'longer than the file',
    ],
    [
      'an object stream stored inside itself',
      () => selfContainedObjectStream(),
      'PDF_UNREADABLE',
      // An object stream is never looked up inside an object stream: the catalog is not found.
      'no document catalog',
    ],
    [
      'two streams taking their /Length from each other',
      () => lengthLoop(),
      'PDF_UNREADABLE',
      'refers to itself',
    ],
    ['a stream whose /Length is itself', () => selfLength(), 'PDF_UNREADABLE', 'refers to itself'],
  ])('%s: 422 within 1 s, nothing stored', async (_name, make, code, message) => {
    const before = await contractRows(world.h);
    const stored = storedFiles(world.h).length;
    const began = performance.now();
    const answer = await refusal(await upload(make()));
    expect(performance.now() - began).toBeLessThan(1000);
    expect(answer).toMatchObject({ status: 422, code });
    expect(answer.message).toContain(message);
    expect(await contractRows(world.h)).toEqual(before);
    expect(storedFiles(world.h)).toHaveLength(stored);
    expect(tempFiles(world.h)).toEqual([]);
  });
});

describe('active content', () => {
  it.each([
    [
      '/OpenAction JavaScript and a /Launch link',
      javaScriptAndLaunch,
      ['JavaScript (object', 'a launch action (/Launch)'],
    ],
    ['a /Launch link alone', launchOnly, ['a launch action (/Launch)']],
    [
      'a document-level script (/Names /JavaScript)',
      documentScript,
      ['JavaScript "/Names /JavaScript"'],
    ],
    ['an attached program', embeddedExecutable, ['an embedded file "invoice.exe"']],
  ])('%s: 422 PDF_ACTIVE_CONTENT naming it, details.field file', async (_name, make, named) => {
    const before = await contractRows(world.h);
    const answer = await refusal(await upload(await make()));
    expect(answer).toMatchObject({
      status: 422,
      code: 'PDF_ACTIVE_CONTENT',
      details: { field: 'file' },
    });
    for (const part of named) expect(answer.message).toContain(part);
    expect(await contractRows(world.h)).toEqual(before);
  });

  it('a web link (/URI) is no active content: the contract is created', async () => {
    expect((await upload(await webLink())).status).toBe(201);
  });
});
