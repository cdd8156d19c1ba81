import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { currentPdfLimits, type PdfLimits } from '../signing/budget';
import { pdfErrors } from '../signing/errors';
import {
  deserializeError,
  revive,
  type SerializedError,
  type TaskReply,
  type TaskRequest,
} from './protocol';

/**
 * Every structural read of a PDF runs here, off the event loop: a small, fixed pool of worker
 * threads, each with its own heap limit, each task under the read limits of
 * `pdf/signing/budget.ts` and a hard deadline. A worker that runs out of memory, dies or
 * passes its deadline is thrown away (a new one starts for the next task) and its task fails
 * with 422 PDF_TOO_COMPLEX; the server's own heap and event loop are not touched.
 *
 * A task is a named, synchronous, pure function of plain data (a file path and options in,
 * plain data out: objects, arrays, numbers, strings, Dates, Buffers). Declare it with
 * `pdfTask` and list it in `tasks.ts`, which is what the worker loads.
 */

/** A function the workers can run, by its name. */
export interface PdfTask<A extends unknown[], R> {
  readonly name: string;
  readonly run: (...args: A) => R;
}

export function pdfTask<A extends unknown[], R>(
  name: string,
  run: (...args: A) => R,
): PdfTask<A, R> {
  return { name, run };
}

export interface PdfPoolOptions {
  /** Worker threads at most. */
  size: number;
  /** Tasks waiting for a worker at most; more is 503 PDF_READER_BUSY. */
  maxQueue: number;
  /** Heap of one worker (old generation), MB: more is PDF_TOO_COMPLEX. */
  maxHeapMb: number;
  /** How long past its read time limit a task may take before its worker is stopped. */
  graceMs: number;
  /** An idle worker stops after this long (a new one starts on demand). */
  idleMs: number;
}

export const defaultPdfPoolOptions: Readonly<PdfPoolOptions> = Object.freeze({
  // One core stays with the event loop.
  size: Math.max(1, Math.min(4, os.availableParallelism() - 1)),
  maxQueue: 64,
  maxHeapMb: 256,
  graceMs: 2_000,
  idleMs: 60_000,
});

interface Job {
  request: TaskRequest;
  deadlineMs: number;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  job: Job | undefined;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Where the worker's code is: `pdfWorker.js` beside the bundle (`npm start`), else the
 * TypeScript entry compiled on load by tsx (tests under ts-jest, scripts under tsx).
 */
function startWorker(maxHeapMb: number): Worker {
  const options = {
    resourceLimits: { maxOldGenerationSizeMb: maxHeapMb, maxYoungGenerationSizeMb: 16 },
    // Only flags a worker accepts (V8 heap flags are per process; resourceLimits set ours).
    execArgv: process.execArgv.filter((flag) => flag === '--enable-source-maps'),
  };
  if (__filename.endsWith('.js')) return new Worker(path.join(__dirname, 'pdfWorker.js'), options);
  const entry = path.join(__dirname, 'entry.ts');
  const tsx = createRequire(__filename).resolve('tsx/cjs/api');
  const code = `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(entry)});`;
  return new Worker(code, { ...options, eval: true });
}

export class PdfWorkerPool {
  private readonly slots = new Set<Slot>();
  private readonly idle: Slot[] = [];
  private readonly queue: Job[] = [];
  private idleTimer: NodeJS.Timeout | undefined;
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: Readonly<PdfPoolOptions> = defaultPdfPoolOptions) {}

  run<A extends unknown[], R>(
    task: PdfTask<A, R>,
    args: A,
    limits?: Partial<PdfLimits>,
  ): Promise<R> {
    if (this.closed) return Promise.reject(new Error('the PDF worker pool is closed'));
    const busy = this.idle.length === 0 && this.slots.size >= this.options.size;
    if (busy && this.queue.length >= this.options.maxQueue) {
      return Promise.reject(pdfErrors.readerBusy());
    }
    const timeMs = limits?.timeMs ?? currentPdfLimits().timeMs;
    return new Promise<R>((resolve, reject) => {
      this.queue.push({
        request: { id: this.nextId++, task: task.name, args, limits },
        deadlineMs: timeMs + this.options.graceMs,
        resolve: (value) => resolve(value as R),
        reject,
      });
      this.dispatch();
    });
  }

  /** Starts the workers now rather than on the first task (a server warms up at start). */
  warm(): void {
    while (this.slots.size < this.options.size) this.release(this.spawn());
  }

  /** Stops every worker; tasks still running or waiting fail. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    for (const job of this.queue.splice(0)) job.reject(new Error('the PDF worker pool closed'));
    await Promise.all(
      [...this.slots].map((slot) => {
        this.discard(slot);
        slot.job?.reject(new Error('the PDF worker pool closed'));
        return slot.worker.terminate();
      }),
    );
  }

  /** Threads running now (for tests and figures). */
  get size(): number {
    return this.slots.size;
  }

  private dispatch(): void {
    while (!this.closed && this.queue.length > 0) {
      const slot =
        this.idle.pop() ?? (this.slots.size < this.options.size ? this.spawn() : undefined);
      if (!slot) return;
      this.start(slot, this.queue.shift()!);
    }
  }

  private spawn(): Slot {
    const slot: Slot = {
      worker: startWorker(this.options.maxHeapMb),
      job: undefined,
      timer: undefined,
    };
    this.slots.add(slot);
    slot.worker.on('message', (reply: TaskReply) => this.finish(slot, reply));
    slot.worker.on('error', (error: Error & { code?: string }) => {
      const job = this.discard(slot);
      if (!job) return;
      job.reject(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? pdfErrors.tooComplex(`reading it needs more than ${this.options.maxHeapMb} MB`)
          : new Error(`the PDF worker failed: ${error.message}`),
      );
    });
    slot.worker.on('exit', (code) => {
      const job = this.discard(slot);
      job?.reject(pdfErrors.tooComplex(`its reader stopped (exit code ${code})`));
    });
    return slot;
  }

  private start(slot: Slot, job: Job): void {
    slot.job = job;
    slot.worker.ref();
    slot.timer = setTimeout(() => {
      const running = this.discard(slot);
      void slot.worker.terminate();
      running?.reject(
        pdfErrors.tooComplex(`reading it takes longer than ${job.deadlineMs / 1000} s`),
      );
    }, job.deadlineMs);
    slot.worker.postMessage(job.request);
  }

  private finish(slot: Slot, reply: TaskReply): void {
    const job = slot.job;
    if (!job || reply.id !== job.request.id) return;
    clearTimeout(slot.timer);
    slot.job = undefined;
    this.release(slot);
    if (reply.ok) job.resolve(revive(reply.value));
    else job.reject(deserializeError(reply.error as SerializedError, job.request.task));
    this.dispatch();
  }

  /** An idle worker does not keep the process alive, and stops after a while unused. */
  private release(slot: Slot): void {
    slot.worker.unref();
    this.idle.push(slot);
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.stopIdle(), this.options.idleMs);
    this.idleTimer.unref();
  }

  private stopIdle(): void {
    for (const slot of this.idle.splice(0)) {
      this.slots.delete(slot);
      void slot.worker.terminate();
    }
  }

  /** Takes a worker out of the pool for good; answers the job it was running, if any. */
  private discard(slot: Slot): Job | undefined {
    if (!this.slots.delete(slot)) return undefined;
    clearTimeout(slot.timer);
    const index = this.idle.indexOf(slot);
    if (index >= 0) this.idle.splice(index, 1);
    const job = slot.job;
    slot.job = undefined;
    // The next task gets a fresh worker.
    queueMicrotask(() => this.dispatch());
    return job;
  }
}

let shared: PdfWorkerPool | undefined;

/** The process's pool, made on first use. */
export function pdfWorkers(): PdfWorkerPool {
  shared ??= new PdfWorkerPool();
  return shared;
}

/** Runs `task` on the process's pool, under the thread's (or the given) read limits. */
export function runPdfTask<A extends unknown[], R>(task: PdfTask<A, R>, ...args: A): Promise<R> {
  return pdfWorkers().run(task, args);
}

/** Stops the process's pool (server shutdown); the next task starts a new one. */
export async function closePdfWorkers(): Promise<void> {
  const pool = shared;
  shared = undefined;
  await pool?.close();
}
