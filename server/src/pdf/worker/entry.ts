import { parentPort } from 'node:worker_threads';
import { withPdfLimits } from '../signing/budget';
import { revive, serializeError, type TaskReply, type TaskRequest } from './protocol';
import { pdfTasks } from './tasks';

/**
 * A PDF worker thread (see pool.ts): runs one task at a time, by name, under the limits the
 * pool sent, and answers its result or its error.
 */
const registry = new Map<string, (...args: unknown[]) => unknown>();
for (const task of pdfTasks) {
  if (registry.has(task.name)) throw new Error(`two PDF tasks are named ${task.name}`);
  registry.set(task.name, task.run);
}

const port = parentPort;
if (!port) throw new Error('pdf/worker/entry.ts runs as a worker thread only');

port.on('message', (request: TaskRequest) => {
  let reply: TaskReply;
  try {
    const run = registry.get(request.task);
    if (!run) throw new Error(`no PDF task named ${request.task}`);
    const value = withPdfLimits(request.limits, () => run(...revive(request.args)));
    reply = { id: request.id, ok: true, value };
    port.postMessage(reply);
    return;
  } catch (error) {
    reply = { id: request.id, ok: false, error: serializeError(error) };
  }
  port.postMessage(reply);
});
