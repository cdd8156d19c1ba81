import { EngineError } from '../engineError';
import type { PdfLimits } from '../signing/budget';

/**
 * The messages between the PDF worker pool and its workers. Arguments and results are plain
 * data as structured clone carries it (objects, arrays, numbers, strings, Dates, Buffers);
 * Buffers arrive as plain Uint8Arrays and `revive` makes them Buffers again.
 */

export interface TaskRequest {
  id: number;
  task: string;
  args: unknown[];
  limits: Partial<PdfLimits> | undefined;
}

export type SerializedError =
  | {
      kind: 'engine';
      code: string;
      message: string;
      field: string | undefined;
      detailCode: string | undefined;
      retryAfterSeconds: number | undefined;
    }
  | { kind: 'error'; message: string; stack: string | undefined };

export type TaskReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: SerializedError };

/** An error as it can cross to the other thread: an EngineError keeps its code and details. */
export function serializeError(error: unknown): SerializedError {
  if (error instanceof EngineError) {
    return {
      kind: 'engine',
      code: error.code,
      message: error.message,
      field: error.field,
      detailCode: error.detailCode,
      retryAfterSeconds: error.retryAfterSeconds,
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { kind: 'error', message, stack: error instanceof Error ? error.stack : undefined };
}

export function deserializeError(error: SerializedError, task: string): Error {
  if (error.kind === 'engine') {
    return new EngineError(error.code, error.message, {
      ...(error.field === undefined ? {} : { field: error.field }),
      ...(error.detailCode === undefined ? {} : { detailCode: error.detailCode }),
      ...(error.retryAfterSeconds === undefined
        ? {}
        : { retryAfterSeconds: error.retryAfterSeconds }),
    });
  }
  const failure = new Error(`PDF task ${task} failed in its worker: ${error.message}`);
  if (error.stack) failure.stack = `${failure.message}\n--- in the worker ---\n${error.stack}`;
  return failure;
}

const tag = (value: object) => Object.prototype.toString.call(value);

/**
 * Rebuilds what structured clone delivered with this realm's types: Uint8Arrays that were
 * Buffers become Buffers again (sharing their memory), Dates, Maps, arrays and plain objects are
 * made anew (under jest the clone's objects belong to another realm, where `instanceof` fails).
 */
export function revive<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (ArrayBuffer.isView(value)) {
    return (
      Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength)
    ) as T;
  }
  if (Array.isArray(value)) return value.map(revive) as T;
  switch (tag(value)) {
    case '[object Date]':
      return new Date((value as unknown as Date).getTime()) as T;
    case '[object Map]':
      return new Map(
        [...(value as unknown as Map<unknown, unknown>)].map(([k, v]) => [revive(k), revive(v)]),
      ) as T;
    case '[object Object]': {
      const record: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) record[key] = revive(item);
      return record as T;
    }
    default:
      return value;
  }
}
