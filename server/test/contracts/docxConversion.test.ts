import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import {
  type ContractWorld,
  contractRows,
  openContractWorld,
  tempFiles,
  wordDocument,
} from './fixtures';

/**
 * A .docx is refused before LibreOffice starts when it would inflate too much (declared sizes,
 * compression ratio, entry count, or a directory that lies), and conversions run under a memory
 * cap, one at a time by default, with a bounded queue.
 */

jest.setTimeout(60_000);

interface ZipEntry {
  name: string;
  /** The entry's bytes as stored (deflated when `deflated`). */
  stored: Buffer;
  deflated: boolean;
  /** The inflated size and CRC the archive declares. */
  size: number;
  crc: number;
}

/** A ZIP archive whose directory says what the entries declare, true or not. */
function zipOf(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const method = entry.deflated ? 8 : 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(entry.crc, 14);
    local.writeUInt32LE(entry.stored.length, 18);
    local.writeUInt32LE(entry.size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(entry.crc, 16);
    central.writeUInt32LE(entry.stored.length, 20);
    central.writeUInt32LE(entry.size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, entry.stored);
    centrals.push(central, name);
    offset += local.length + name.length + entry.stored.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** `total` zero bytes deflated as one stream, fed a reused megabyte at a time. */
async function deflatedZeros(total: number): Promise<Buffer> {
  const deflate = zlib.createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => out.push(chunk));
  const done = new Promise((resolve) => deflate.on('end', resolve));
  const megabyte = Buffer.alloc(1024 * 1024);
  for (let left = total; left > 0; left -= megabyte.length) {
    if (!deflate.write(left >= megabyte.length ? megabyte : megabyte.subarray(0, left))) {
      await new Promise((resolve) => deflate.once('drain', resolve));
    }
  }
  deflate.end();
  await done;
  return Buffer.concat(out);
}

const contentTypes = Buffer.from(
  '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
);

function storedEntry(name: string, data: Buffer): ZipEntry {
  return { name, stored: data, deflated: false, size: data.length, crc: zlib.crc32(data) };
}

/** A script standing in for soffice: records its runs (and its memory limit), converts nothing. */
function recordingSoffice(dir: string, body = ''): { command: string; log: string } {
  const log = path.join(dir, 'soffice.log');
  const command = path.join(dir, 'soffice-recorder.sh');
  fs.writeFileSync(
    command,
    `#!/bin/sh\necho "start $(date +%s%N) as=$(ulimit -v)" >> "${log}"\n${body}\necho "end $(date +%s%N)" >> "${log}"\nexit 1\n`,
    { mode: 0o755 },
  );
  return { command, log };
}

function runs(log: string): string[] {
  return fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : [];
}

async function errorOf(response: Response) {
  return (await response.json()) as { code: string; message: string; details?: { field?: string } };
}

describe('a .docx that would inflate too much: 422 DOCX_TOO_LARGE before LibreOffice starts', () => {
  let world: ContractWorld;
  let soffice: { command: string; log: string };
  beforeAll(async () => {
    const dir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'esign-soffice-'));
    soffice = recordingSoffice(dir);
    world = await openContractWorld({ SOFFICE_PATH: soffice.command });
  });
  afterAll(async () => {
    await world?.close();
    fs.rmSync(path.dirname(soffice.command), { recursive: true, force: true });
  });

  async function expectRefused(docx: Buffer, reason: RegExp) {
    const before = await contractRows(world.h);
    const started = Date.now();
    const response = await world.upload(world.acme.orgKey, {
      file: { name: 'bomb.docx', bytes: docx },
    });
    // Generous for a loaded machine: reading the directory and inflating is sub-second.
    expect(Date.now() - started).toBeLessThan(5000);
    expect(response.status).toBe(422);
    const body = await errorOf(response);
    expect(body).toMatchObject({ code: 'DOCX_TOO_LARGE', details: { field: 'file' } });
    expect(body.message).toMatch(reason);
    expect(runs(soffice.log)).toEqual([]);
    expect(await contractRows(world.h)).toEqual(before);
    expect(tempFiles(world.h)).toEqual([]);
  }

  it('a 1 GiB document.xml deflated to about a megabyte (declared as it is)', async () => {
    const size = 1024 * 1024 * 1024;
    const stored = await deflatedZeros(size);
    expect(stored.length).toBeLessThan(2 * 1024 * 1024);
    const docx = zipOf([
      storedEntry('[Content_Types].xml', contentTypes),
      // The CRC is not checked before the size: any value does.
      { name: 'word/document.xml', stored, deflated: true, size, crc: 0 },
    ]);
    await expectRefused(docx, /word\/document\.xml declares 1073741824 bytes/);
  });

  it('an entry under the size limit compressed more than 200 to 1', async () => {
    const size = 50 * 1024 * 1024;
    const stored = await deflatedZeros(size);
    const docx = zipOf([{ name: 'word/document.xml', stored, deflated: true, size, crc: 0 }]);
    await expectRefused(docx, /compressed more than 200 to 1/);
  });

  it('a directory that lies: declares 1 KB, inflates to 200 MB', async () => {
    const stored = await deflatedZeros(200 * 1024 * 1024);
    const docx = zipOf([{ name: 'word/document.xml', stored, deflated: true, size: 1024, crc: 0 }]);
    await expectRefused(docx, /inflates to more than the 1024 bytes it declares/);
  });

  it('entries that together declare more than 100 MB', async () => {
    const part = await deflatedZeros(1024 * 1024);
    const entries = Array.from({ length: 120 }, (_, index) => ({
      name: `word/media/image${index}.bin`,
      stored: part,
      deflated: true,
      size: 1024 * 1024,
      crc: 0,
    }));
    await expectRefused(zipOf(entries), /more than 104857600 bytes in all/);
  });

  it('more than 2000 entries', async () => {
    const entries = Array.from({ length: 2001 }, (_, index) =>
      storedEntry(`word/part${index}.xml`, Buffer.from('<a/>')),
    );
    await expectRefused(zipOf(entries), /2001 entries/);
  });
});

describe('conversions: a memory cap, one at a time, a bounded queue', () => {
  it('soffice runs under the address-space limit (DOCX_CONVERSION_MEMORY_MB)', async () => {
    const dir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'esign-soffice-'));
    const soffice = recordingSoffice(dir);
    const world = await openContractWorld({
      SOFFICE_PATH: soffice.command,
      DOCX_CONVERSION_MEMORY_MB: '768',
    });
    try {
      const response = await world.upload(world.acme.orgKey, {
        file: { name: 'a.docx', bytes: wordDocument('memory') },
      });
      expect((await errorOf(response)).code).toBe('DOCX_CONVERSION_FAILED');
      expect(runs(soffice.log)[0]).toMatch(new RegExp(`as=${768 * 1024}$`));
    } finally {
      await world.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('concurrency 1 and a queue of 1: the third upload at once gets 503 DOCX_CONVERSION_BUSY; runs never overlap', async () => {
    const dir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'esign-soffice-'));
    const soffice = recordingSoffice(dir, 'sleep 1');
    const world = await openContractWorld({
      SOFFICE_PATH: soffice.command,
      DOCX_CONVERSION_CONCURRENCY: '1',
      DOCX_CONVERSION_QUEUE: '1',
    });
    try {
      const responses = await Promise.all(
        [1, 2, 3].map((n) =>
          world.upload(world.acme.orgKey, {
            file: { name: `${n}.docx`, bytes: wordDocument(`queued ${n}`) },
          }),
        ),
      );
      const outcomes = await Promise.all(
        responses.map(async (response) => ({
          status: response.status,
          code: (await errorOf(response)).code,
          retryAfter: response.headers.get('retry-after'),
        })),
      );
      expect(outcomes.filter((outcome) => outcome.status === 503)).toEqual([
        { status: 503, code: 'DOCX_CONVERSION_BUSY', retryAfter: '10' },
      ]);
      expect(outcomes.filter((outcome) => outcome.status === 422)).toHaveLength(2);
      // Two runs, one after the other: start, end, start, end.
      const kinds = runs(soffice.log).map((line) => line.split(' ')[0]);
      expect(kinds).toEqual(['start', 'end', 'start', 'end']);
      expect(tempFiles(world.h)).toEqual([]);
    } finally {
      await world.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
