import type { FileHandle } from 'node:fs/promises';
import { pdfErrors } from './errors';

/**
 * Streaming a byte range of a large PDF through the hashes (and into a copy) at the speed of
 * SHA-256: 1 MiB chunks, the next read (and the last write) under way in the thread pool while
 * the main thread hashes the current chunk. Three buffers whatever the file's size.
 */
const chunkSize = 1024 * 1024;
/**
 * A copy asks the disk to write back what it has written every so many chunks, without waiting:
 * the store's fsync at the end then flushes only the tail instead of the whole file.
 */
const chunksPerWriteBack = 8;

/**
 * Hands the bytes [start, start + length) of `source` to `use` chunk by chunk and, when `target`
 * is given, writes each chunk there at `targetOffset + (its offset - start)` after `use` saw it
 * (what is hashed is what is written). A file shorter than the range is a 422: its structure
 * promised bytes that are not there.
 */
export async function streamChunks(
  source: FileHandle,
  start: number,
  length: number,
  use: (chunk: Buffer) => void,
  target?: { file: FileHandle; offset: number },
): Promise<void> {
  if (length <= 0) return;
  const buffers = [0, 1, 2].map(() => Buffer.allocUnsafe(Math.min(chunkSize, length)));
  const end = start + length;
  const readInto = (index: number, offset: number) =>
    offset < end
      ? settledLater(
          source.read(buffers[index % 3]!, 0, Math.min(buffers[0]!.length, end - offset), offset),
        )
      : undefined;
  let writing: Promise<unknown> = Promise.resolve();
  let writingBack: Promise<unknown> = Promise.resolve();
  let offset = start;
  let reading = readInto(0, offset);
  try {
    for (let index = 0; reading; index += 1) {
      const { bytesRead, buffer } = await reading;
      if (bytesRead === 0) throw pdfErrors.unreadable('the file ends before its byte range does');
      const chunk = buffer.subarray(0, bytesRead);
      const chunkOffset = offset;
      offset += bytesRead;
      // Buffer index + 1 last held chunk index - 2, whose write was awaited a turn ago.
      reading = readInto(index + 1, offset);
      use(chunk);
      if (target) {
        await writing;
        writing = settledLater(
          target.file.write(chunk, 0, bytesRead, target.offset + chunkOffset - start),
        );
        if (index % chunksPerWriteBack === chunksPerWriteBack - 1) {
          // One write-back at a time; it follows the writes before it.
          const written = writing;
          writingBack = settledLater(
            Promise.all([writingBack, written]).then(() => target.file.datasync()),
          );
        }
      }
    }
    await Promise.all([writing, writingBack]);
  } catch (error) {
    // Nothing may still be reading into or writing from the buffers when the caller goes on.
    await Promise.allSettled([reading, writing, writingBack]);
    throw error;
  }
}

/**
 * `promise`, marked as handled: it is awaited later, maybe after it failed while another one
 * was awaited, which must not count as an unhandled rejection.
 */
function settledLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}
