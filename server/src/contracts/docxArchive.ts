import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import zlib from 'node:zlib';
import { DomainError } from '../errors/domainError';

/**
 * What a .docx (a ZIP package) may hold before LibreOffice is asked to open it. A Word contract
 * is a few MB once inflated; an archive past these bounds is refused with 422 DOCX_TOO_LARGE
 * before any conversion starts.
 */
export const docxLimits = {
  /** Entries in the central directory. */
  entries: 2000,
  /** Inflated bytes of one entry, and of all together (declared, then as actually inflated). */
  entryBytes: 100 * 1024 * 1024,
  totalBytes: 100 * 1024 * 1024,
  /** Inflated to compressed, for an entry of more than `ratioFloorBytes` inflated. */
  ratio: 200,
  ratioFloorBytes: 1024 * 1024,
} as const;

export const docxArchiveCodes = {
  tooLarge: 'DOCX_TOO_LARGE',
} as const;

/** An entry of the central directory. */
interface Entry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
}

const endOfDirectory = 0x06054b50;
const zip64Locator = 0x07064b50;
const zip64End = 0x06064b50;
const centralHeader = 0x02014b50;
const localHeader = 0x04034b50;
/** The end record (22 bytes) and the longest comment after it. */
const endSearchBytes = 22 + 0xffff;

function tooLarge(reason: string): DomainError {
  return new DomainError(
    docxArchiveCodes.tooLarge,
    `The Word document is refused before conversion: ${reason}`,
    { field: 'file' },
  );
}

function unreadable(reason: string): DomainError {
  return new DomainError(
    'DOCX_CONVERSION_FAILED',
    `The Word document is not a valid ZIP package: ${reason}`,
    {
      field: 'file',
    },
  );
}

async function readAt(handle: fs.FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}

/** Where the central directory is and how many entries it has (ZIP64 aware). */
async function directoryOf(
  handle: fs.FileHandle,
  fileSize: number,
): Promise<{ offset: number; size: number; count: number }> {
  const tailStart = Math.max(0, fileSize - endSearchBytes);
  const tail = await readAt(handle, tailStart, fileSize - tailStart);
  let at = -1;
  for (let index = tail.length - 22; index >= 0; index -= 1) {
    if (tail.readUInt32LE(index) === endOfDirectory) {
      at = index;
      break;
    }
  }
  if (at < 0) throw unreadable('no end of central directory');
  let count = tail.readUInt16LE(at + 10);
  let size = tail.readUInt32LE(at + 12);
  let offset = tail.readUInt32LE(at + 16);
  if (count === 0xffff || size === 0xffffffff || offset === 0xffffffff) {
    const locatorAt = at - 20;
    if (locatorAt < 0 || tail.readUInt32LE(locatorAt) !== zip64Locator) {
      throw unreadable('no ZIP64 end of central directory locator');
    }
    const recordOffset = Number(tail.readBigUInt64LE(locatorAt + 8));
    const record = await readAt(handle, recordOffset, 56);
    if (record.length < 56 || record.readUInt32LE(0) !== zip64End) {
      throw unreadable('no ZIP64 end of central directory');
    }
    count = Number(record.readBigUInt64LE(32));
    size = Number(record.readBigUInt64LE(40));
    offset = Number(record.readBigUInt64LE(48));
  }
  if (count > docxLimits.entries) {
    throw tooLarge(`${count} entries (at most ${docxLimits.entries})`);
  }
  if (offset + size > fileSize) throw unreadable('the central directory lies outside the file');
  return { offset, size, count };
}

/** The ZIP64 extended sizes of an entry whose 32-bit fields are saturated. */
function zip64Sizes(extra: Buffer, entry: Entry): void {
  for (let at = 0; at + 4 <= extra.length; ) {
    const id = extra.readUInt16LE(at);
    const length = extra.readUInt16LE(at + 2);
    if (id === 0x0001) {
      let field = at + 4;
      const next = (): number => {
        if (field + 8 > at + 4 + length) throw unreadable('a truncated ZIP64 field');
        const value = Number(extra.readBigUInt64LE(field));
        field += 8;
        return value;
      };
      if (entry.size === 0xffffffff) entry.size = next();
      if (entry.compressedSize === 0xffffffff) entry.compressedSize = next();
      if (entry.localHeaderOffset === 0xffffffff) entry.localHeaderOffset = next();
      return;
    }
    at += 4 + length;
  }
}

function entriesOf(directory: Buffer, count: number): Entry[] {
  const entries: Entry[] = [];
  let at = 0;
  for (let index = 0; index < count; index += 1) {
    if (at + 46 > directory.length || directory.readUInt32LE(at) !== centralHeader) {
      throw unreadable('a damaged central directory');
    }
    const nameLength = directory.readUInt16LE(at + 28);
    const extraLength = directory.readUInt16LE(at + 30);
    const commentLength = directory.readUInt16LE(at + 32);
    const entry: Entry = {
      name: directory.toString('utf8', at + 46, at + 46 + nameLength),
      method: directory.readUInt16LE(at + 10),
      compressedSize: directory.readUInt32LE(at + 20),
      size: directory.readUInt32LE(at + 24),
      localHeaderOffset: directory.readUInt32LE(at + 42),
    };
    zip64Sizes(directory.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength), entry);
    entries.push(entry);
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** The declared sizes against the limits: nothing is inflated yet. */
function checkDeclared(entries: Entry[]): void {
  let total = 0;
  for (const entry of entries) {
    if (entry.size > docxLimits.entryBytes) {
      throw tooLarge(
        `${entry.name} declares ${entry.size} bytes (at most ${docxLimits.entryBytes})`,
      );
    }
    if (
      entry.size > docxLimits.ratioFloorBytes &&
      entry.size > docxLimits.ratio * Math.max(1, entry.compressedSize)
    ) {
      throw tooLarge(`${entry.name} is compressed more than ${docxLimits.ratio} to 1`);
    }
    total += entry.size;
    if (total > docxLimits.totalBytes) {
      throw tooLarge(`its entries declare more than ${docxLimits.totalBytes} bytes in all`);
    }
  }
}

/**
 * Inflates every entry as a stream, counting, and stops at the first that inflates to more than
 * it declared (a lying directory) or past the total: the bytes are never kept.
 */
async function checkInflated(
  filePath: string,
  handle: fs.FileHandle,
  entries: Entry[],
): Promise<void> {
  let total = 0;
  for (const entry of entries) {
    if (entry.compressedSize === 0) continue;
    const local = await readAt(handle, entry.localHeaderOffset, 30);
    if (local.length < 30 || local.readUInt32LE(0) !== localHeader) {
      throw unreadable(`no local header for ${entry.name}`);
    }
    const start = entry.localHeaderOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
    const compressed = createReadStream(filePath, {
      start,
      end: start + entry.compressedSize - 1,
    });
    if (entry.method === 0) {
      total += entry.compressedSize;
      compressed.destroy();
    } else if (entry.method === 8) {
      total += await inflatedSize(compressed, entry, docxLimits.totalBytes - total);
    } else {
      compressed.destroy();
      throw unreadable(`${entry.name} uses compression method ${entry.method}`);
    }
    if (total > docxLimits.totalBytes) {
      throw tooLarge(`its entries inflate to more than ${docxLimits.totalBytes} bytes in all`);
    }
  }
}

function inflatedSize(
  compressed: NodeJS.ReadableStream & { destroy(): void },
  entry: Entry,
  budget: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const inflate = zlib.createInflateRaw();
    let size = 0;
    const stop = (error: DomainError) => {
      compressed.destroy();
      inflate.destroy();
      reject(error);
    };
    inflate.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > entry.size) {
        stop(tooLarge(`${entry.name} inflates to more than the ${entry.size} bytes it declares`));
      } else if (size > budget) {
        stop(tooLarge(`its entries inflate to more than ${docxLimits.totalBytes} bytes in all`));
      }
    });
    inflate.on('end', () => resolve(size));
    inflate.on('error', () => stop(unreadable(`${entry.name} does not inflate`)));
    compressed.on('error', () => stop(unreadable(`${entry.name} cannot be read`)));
    compressed.pipe(inflate);
  });
}

/**
 * Refuses a .docx that would make the converter inflate too much: too many entries, a declared
 * size over the limits or an absurd compression ratio (from the central directory, a few KB
 * read), then the entries inflated as streams and counted (a directory that lies). Runs before
 * LibreOffice is started.
 */
export async function assertDocxWithinLimits(filePath: string): Promise<void> {
  const handle = await fs.open(filePath, 'r');
  try {
    const { size: fileSize } = await handle.stat();
    const { offset, size, count } = await directoryOf(handle, fileSize);
    const entries = entriesOf(await readAt(handle, offset, size), count);
    checkDeclared(entries);
    await checkInflated(filePath, handle, entries);
  } finally {
    await handle.close();
  }
}
