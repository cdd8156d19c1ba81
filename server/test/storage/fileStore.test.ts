import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { DomainError } from '../../src/errors/domainError';
import { LocalFileStore } from '../../src/storage/localFileStore';

let root: string;
let store: LocalFileStore;

beforeEach(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-files-'));
  store = new LocalFileStore(path.join(root, 'files'));
  await store.init();
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

function tempFile(bytes: Buffer): string {
  const file = path.join(store.tempDir, `test-${crypto.randomUUID()}`);
  fs.writeFileSync(file, bytes);
  return file;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A stream of `total` bytes that pushes one reused chunk, so the test never holds them either. */
function generated(total: number, onEnd: () => void = () => {}, chunkSize = 256 * 1024): Readable {
  const chunk = Buffer.alloc(chunkSize, 0x5a);
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= total) {
        onEnd();
        this.push(null);
        return;
      }
      const size = Math.min(chunkSize, total - sent);
      this.push(size === chunkSize ? chunk : chunk.subarray(0, size));
      sent += size;
    },
  });
}

describe('File store: content-addressed by SHA-256', () => {
  it('stores a stream under <root>/<aa>/<bb>/<sha256> and returns its hash and size', async () => {
    const bytes = Buffer.from('%PDF-1.7 hello');
    const stored = await store.put(Readable.from([bytes.subarray(0, 4), bytes.subarray(4)]));
    const hash = sha256(bytes);
    expect(stored).toEqual({ sha256: hash, size: bytes.length, created: true });
    const expected = path.join(root, 'files', hash.slice(0, 2), hash.slice(2, 4), hash);
    expect(store.pathOf(hash)).toBe(expected);
    expect(fs.readFileSync(expected).equals(bytes)).toBe(true);
    expect(fs.statSync(expected).mode & 0o777).toBe(0o600);
    expect(await store.exists(hash)).toBe(true);
  });

  it('stores a copy of a file given by path and leaves the source alone', async () => {
    const source = path.join(root, 'source.pdf');
    fs.writeFileSync(source, 'source bytes');
    const stored = await store.put(source);
    expect(stored.sha256).toBe(sha256(Buffer.from('source bytes')));
    expect(fs.existsSync(source)).toBe(true);
  });

  it('is idempotent: the same content is stored once and reported as not created', async () => {
    const bytes = Buffer.from('same bytes');
    const first = await store.put(Readable.from([bytes]));
    const second = await store.put(Readable.from([bytes]));
    expect(first.created).toBe(true);
    expect(second).toEqual({ ...first, created: false });
    expect(fs.readdirSync(store.tempDir)).toEqual([]);
  });

  it('stores an empty file', async () => {
    const stored = await store.put(Readable.from([]));
    expect(stored).toEqual({ sha256: sha256(Buffer.alloc(0)), size: 0, created: true });
  });

  it('writes a large file while it streams in, never holding it in memory', async () => {
    const size = 64 * 1024 * 1024;
    let onDiskAtEnd = 0;
    const source = generated(size, () => {
      const [temp] = fs.readdirSync(store.tempDir);
      onDiskAtEnd = temp === undefined ? 0 : fs.statSync(path.join(store.tempDir, temp)).size;
    });
    const stored = await store.put(source);
    expect(stored.size).toBe(size);
    // When the source ends, all but what sits in stream buffers is already in the temp file.
    expect(onDiskAtEnd).toBeGreaterThan(size - 4 * 1024 * 1024);
    const opened = await store.open(stored.sha256);
    const hash = crypto.createHash('sha256');
    for await (const chunk of opened.stream) hash.update(chunk as Buffer);
    expect(hash.digest('hex')).toBe(stored.sha256);
  });

  it('leaves no temp file behind when the source stream fails', async () => {
    const failing = new Readable({
      read() {
        this.destroy(new Error('source broke'));
      },
    });
    await expect(store.put(failing)).rejects.toThrow('source broke');
    expect(fs.readdirSync(store.tempDir)).toEqual([]);
  });

  it('repairs a damaged copy (same name, wrong size) with the new bytes', async () => {
    const bytes = Buffer.from('the real content');
    const first = await store.put(Readable.from([bytes]));
    fs.writeFileSync(store.pathOf(first.sha256), 'trunc');
    const again = await store.put(Readable.from([bytes]));
    expect(again.created).toBe(false);
    expect(fs.readFileSync(store.pathOf(first.sha256)).equals(bytes)).toBe(true);
  });
});

describe('File store: adopting a downloaded temp file', () => {
  it('hashes the file while reading it and renames it into place', async () => {
    const bytes = Buffer.from('%PDF- downloaded');
    const temp = tempFile(bytes);
    const stored = await store.putFile(temp);
    expect(stored).toEqual({ sha256: sha256(bytes), size: bytes.length, created: true });
    expect(fs.existsSync(temp)).toBe(false);
    expect(fs.readFileSync(store.pathOf(stored.sha256)).equals(bytes)).toBe(true);
  });

  it('drops the temp file when the content is already stored', async () => {
    const bytes = Buffer.from('twice');
    await store.put(Readable.from([bytes]));
    const temp = tempFile(bytes);
    const stored = await store.putFile(temp);
    expect(stored.created).toBe(false);
    expect(fs.existsSync(temp)).toBe(false);
    expect(fs.readdirSync(store.tempDir)).toEqual([]);
  });

  it('fails for a missing temp file', async () => {
    await expect(store.putFile(path.join(store.tempDir, 'gone'))).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });
});

describe('File store: adopting a temp file its writer hashed', () => {
  it('renames it into place under the given SHA-256 without reading it again', async () => {
    const bytes = Buffer.from('%PDF- prepared');
    const temp = tempFile(bytes);
    const stored = await store.putHashed(temp, { sha256: sha256(bytes), size: bytes.length });
    expect(stored).toEqual({ sha256: sha256(bytes), size: bytes.length, created: true });
    expect(fs.existsSync(temp)).toBe(false);
    expect(fs.readFileSync(store.pathOf(stored.sha256)).equals(bytes)).toBe(true);
  });

  it('refuses a file whose size is not the one written, or a name that is no SHA-256, and drops it', async () => {
    const bytes = Buffer.from('%PDF- changed since');
    const grown = tempFile(bytes);
    await expect(
      store.putHashed(grown, { sha256: sha256(bytes), size: bytes.length - 1 }),
    ).rejects.toThrow('not the size it was written');
    const named = tempFile(bytes);
    await expect(store.putHashed(named, { sha256: '../x', size: bytes.length })).rejects.toThrow(
      TypeError,
    );
    expect(fs.readdirSync(store.tempDir)).toEqual([]);
  });
});

describe('File store: reading', () => {
  it('opens a stored file as a stream with its size', async () => {
    const bytes = Buffer.from('read me back');
    const stored = await store.put(Readable.from([bytes]));
    const opened = await store.open(stored.sha256);
    expect(opened.size).toBe(bytes.length);
    expect((await readAll(opened.stream)).equals(bytes)).toBe(true);
  });

  it('reports content missing from disk as a server error', async () => {
    const missing = sha256(Buffer.from('never stored'));
    expect(await store.exists(missing)).toBe(false);
    const error = await store.open(missing).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: 'FILE_CONTENT_MISSING' });
  });

  it('accepts only lower-case SHA-256 hex names (no path tricks)', async () => {
    for (const name of ['../../etc/passwd', 'A'.repeat(64), 'ab', `${'a'.repeat(63)}/`]) {
      expect(() => store.pathOf(name)).toThrow(TypeError);
      await expect(store.exists(name)).rejects.toThrow(TypeError);
      await expect(store.open(name)).rejects.toThrow(TypeError);
    }
  });
});

describe('File store: rollback of a failed creation', () => {
  it('removes a file its own put created', async () => {
    const stored = await store.put(Readable.from([Buffer.from('rolled back')]));
    expect(await store.remove(stored)).toBe(true);
    expect(await store.exists(stored.sha256)).toBe(false);
  });

  it('keeps a file that was already stored before the failed put', async () => {
    const committed = await store.put(Readable.from([Buffer.from('shared')]));
    store.keep(committed);
    const failed = await store.put(Readable.from([Buffer.from('shared')]));
    expect(await store.remove(failed)).toBe(false);
    expect(await store.exists(committed.sha256)).toBe(true);
  });

  it('keeps a file another creation stored meanwhile, even after that one committed', async () => {
    const failing = await store.put(Readable.from([Buffer.from('concurrent')]));
    const other = await store.put(Readable.from([Buffer.from('concurrent')]));
    store.keep(other);
    expect(await store.remove(failing)).toBe(false);
    expect(await store.exists(failing.sha256)).toBe(true);
  });

  it('lets the next put create the file again after a rollback removed it', async () => {
    const first = await store.put(Readable.from([Buffer.from('again')]));
    await store.remove(first);
    const second = await store.put(Readable.from([Buffer.from('again')]));
    expect(second.created).toBe(true);
    expect(await store.exists(second.sha256)).toBe(true);
  });

  it('orders a rollback and a concurrent put of the same content safely', async () => {
    const bytes = Buffer.from('race');
    const first = await store.put(Readable.from([bytes]));
    const [removed, second] = await Promise.all([
      store.remove(first),
      store.putFile(tempFile(bytes)),
    ]);
    // Whichever ran first, the second put's content is on disk afterwards.
    expect(await store.exists(second.sha256)).toBe(true);
    expect(removed === second.created).toBe(true);
  });
});
