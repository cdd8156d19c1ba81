import fs from 'node:fs';
import { Writable } from 'node:stream';
import { buildApp } from '../../src/app';
import { createLogger } from '../../src/platform/logger';
import { type Listening, listen, rawExchange } from '../support/listening';
import {
  type ContractWorld,
  contractPdf,
  contractRows,
  contractsPath,
  deadline,
  defaultSigners,
  openContractWorld,
  tempFiles,
} from './fixtures';

/**
 * Hostile multipart bodies sent to the real HTTP server on 127.0.0.1: repeated or unexpected
 * parts are a prompt 400 INVALID_MULTIPART naming the part, with every temporary file removed
 * and no file descriptor left open; a client that goes away mid-upload is logged as such.
 */

jest.setTimeout(15_000);

let world: ContractWorld;
let server: Listening;
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  world = await openContractWorld();
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() !== '') logLines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  const logger = createLogger('info', sink);
  server = await listen(buildApp({ ...world.h.deps, logger }), logger);
});
afterAll(async () => {
  await server?.close();
  await world?.close();
});

interface Part {
  name: string;
  fileName?: string;
  data: Buffer | string;
}

const boundary = '----esign-test-boundary-7MA4YWxkTrZu0gW';

function multipart(parts: Part[]): Buffer {
  const pieces: Buffer[] = [];
  for (const part of parts) {
    const disposition =
      part.fileName === undefined
        ? `form-data; name="${part.name}"`
        : `form-data; name="${part.name}"; filename="${part.fileName}"`;
    const type = part.fileName === undefined ? '' : '\r\nContent-Type: application/pdf';
    pieces.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}${type}\r\n\r\n`),
      Buffer.from(part.data),
      Buffer.from('\r\n'),
    );
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(pieces);
}

function fieldsOf(extra: Part[] = []): Part[] {
  return [
    { name: 'title', data: 'Hợp đồng' },
    { name: 'contractTypeId', data: '1' },
    { name: 'expiredAt', data: deadline },
    { name: 'signers', data: JSON.stringify(defaultSigners) },
    ...extra,
  ];
}

function head(length: number | 'chunked', key = world.acme.orgKey): string {
  return [
    `POST ${contractsPath} HTTP/1.1`,
    'Host: 127.0.0.1',
    `X-API-Key: ${key}`,
    `Content-Type: multipart/form-data; boundary=${boundary}`,
    length === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`,
    'Connection: close',
  ].join('\r\n');
}

/** Open file descriptors of this process (the server runs in it). */
function openFds(): number {
  return fs.readdirSync('/proc/self/fd').length;
}

/** Waits (up to 3 s) for the descriptors to come back to `before`; returns the last count. */
async function fdsSettle(before: number): Promise<number> {
  let now = openFds();
  for (let tries = 0; tries < 30 && now > before; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    now = openFds();
  }
  return now;
}

async function tempSettles(): Promise<string[]> {
  for (let tries = 0; tries < 30 && tempFiles(world.h).length > 0; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return tempFiles(world.h);
}

describe('POST /api/contracts over HTTP: repeated or unexpected parts', () => {
  let pdf: Buffer;
  beforeAll(async () => {
    pdf = await contractPdf('multipart');
  });

  it.each<[string, () => Part[], string]>([
    [
      'two file parts',
      () => [
        { name: 'file', fileName: 'a.pdf', data: pdf },
        { name: 'file', fileName: 'b.pdf', data: pdf },
        ...fieldsOf(),
      ],
      'file',
    ],
    [
      'a second file part after the fields',
      () => [
        { name: 'file', fileName: 'a.pdf', data: pdf },
        ...fieldsOf(),
        { name: 'file', fileName: 'b.pdf', data: pdf },
      ],
      'file',
    ],
    [
      'a file part under another name',
      () => [{ name: 'attachment', fileName: 'a.pdf', data: pdf }, ...fieldsOf()],
      'attachment',
    ],
    [
      'an unknown text field',
      () => [
        { name: 'file', fileName: 'a.pdf', data: pdf },
        ...fieldsOf([{ name: 'owner', data: 'x' }]),
      ],
      'owner',
    ],
    [
      'a repeated text field',
      () => [
        { name: 'file', fileName: 'a.pdf', data: pdf },
        ...fieldsOf([{ name: 'title', data: 'Một tiêu đề khác' }]),
      ],
      'title',
    ],
    [
      'file sent as a text field',
      () => [{ name: 'file', data: 'not a file' }, ...fieldsOf()],
      'file',
    ],
  ])(
    '%s: 400 INVALID_MULTIPART within 5 s, no temp file, no descriptor left',
    async (_label, parts, field) => {
      const before = await contractRows(world.h);
      const fds = openFds();
      const body = multipart(parts());
      const answer = await rawExchange(server.port, head(body.length), [body]);
      // Prompt, not at the end of a timeout: a generous bound, as the machine may be loaded.
      expect(answer.ms).toBeLessThan(5000);
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toMatchObject({
        statusCode: 400,
        error: 'Bad Request',
        code: 'INVALID_MULTIPART',
        details: { field },
      });
      expect(await tempSettles()).toEqual([]);
      expect(await fdsSettle(fds)).toBeLessThanOrEqual(fds);
      expect(await contractRows(world.h)).toEqual(before);
    },
  );

  it('the same refusals in chunked transfer coding', async () => {
    const fds = openFds();
    const body = multipart([
      { name: 'file', fileName: 'a.pdf', data: pdf },
      { name: 'file', fileName: 'b.pdf', data: pdf },
      ...fieldsOf(),
    ]);
    const chunked = Buffer.concat([
      Buffer.from(`${body.length.toString(16)}\r\n`),
      body,
      Buffer.from('\r\n0\r\n\r\n'),
    ]);
    const answer = await rawExchange(server.port, head('chunked'), [chunked]);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({
      code: 'INVALID_MULTIPART',
      details: { field: 'file' },
    });
    expect(await tempSettles()).toEqual([]);
    expect(await fdsSettle(fds)).toBeLessThanOrEqual(fds);
  });

  it('the spec fields and acceptInvalidSignatures are accepted: 201', async () => {
    const body = multipart([
      { name: 'file', fileName: 'a.pdf', data: await contractPdf('accepted-fields') },
      ...fieldsOf([
        { name: 'description', data: 'Mô tả' },
        { name: 'acceptInvalidSignatures', data: 'false' },
      ]),
    ]);
    const answer = await rawExchange(server.port, head(body.length), [body]);
    expect({ status: answer.status, body: answer.body }).toMatchObject({ status: 201 });
    expect(await tempSettles()).toEqual([]);
  });
});

describe('POST /api/contracts over HTTP: a client that goes away mid-upload', () => {
  it('is logged as a client abort, never a 500; its temp file is removed', async () => {
    const fds = openFds();
    const file = Buffer.concat([await contractPdf('aborted'), Buffer.alloc(4 * 1024 * 1024, 0x20)]);
    const body = multipart([...fieldsOf(), { name: 'file', fileName: 'a.pdf', data: file }]);
    const from = logLines.length;
    // Sends the fields and about 1 MB of the file, then resets the connection.
    await rawExchange(server.port, head(body.length), chunksOf(body, 64 * 1024), {
      abortAfterBytes: 1024 * 1024,
    });
    expect(await tempSettles()).toEqual([]);
    expect(await fdsSettle(fds)).toBeLessThanOrEqual(fds);
    let lines: Record<string, unknown>[] = [];
    for (let tries = 0; tries < 30; tries += 1) {
      lines = logLines.slice(from);
      if (lines.some((line) => line.msg === 'client aborted the request')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(lines.filter((line) => line.msg === 'unhandled error')).toEqual([]);
    expect(lines.some((line) => line.status === 500)).toBe(false);
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'client aborted the request' }));
  });
});

function* chunksOf(bytes: Buffer, size: number): Generator<Buffer> {
  for (let offset = 0; offset < bytes.length; offset += size) {
    yield bytes.subarray(offset, offset + size);
  }
}
