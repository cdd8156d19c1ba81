import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { DeleteBucketCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { contentDisposition, downloadName } from '../../src/files/download';
import { ManualClock } from '../../src/platform/clock';
import { S3FileStore, s3Client } from '../../src/storage/s3FileStore';
import { type S3Peer, startS3Peer } from '../support/s3Peer';

const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

let peer: S3Peer;
let tempDir: string;
let clock: ManualClock;
let store: S3FileStore;

beforeAll(async () => {
  peer = await startS3Peer();
});

afterAll(async () => {
  await peer.close();
});

beforeEach(() => {
  tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-s3-temp-'));
  clock = new ManualClock('2026-11-25T08:00:00.000Z');
  store = new S3FileStore(
    s3Client(peer.settings),
    { ...peer.settings, presignedDownloads: true },
    tempDir,
    clock,
  );
});

afterEach(() => {
  store.client.destroy();
  fs.rmSync(tempDir, { recursive: true, force: true });
});

/** `total` bytes in chunks of 64 KiB, made as they are read: the test holds no whole copy either. */
function randomStream(total: number, seed: string): { stream: Readable; digest: () => string } {
  const hash = crypto.createHash('sha256');
  let made = 0;
  let counter = 0;
  const stream = new Readable({
    read() {
      if (made >= total) {
        this.push(null);
        return;
      }
      const size = Math.min(65536, total - made);
      const chunk = Buffer.alloc(size);
      for (let at = 0; at < size; at += 32) {
        crypto.createHash('sha256').update(`${seed}:${counter++}`).digest().copy(chunk, at);
      }
      hash.update(chunk);
      made += size;
      this.push(chunk);
    },
  });
  return { stream, digest: () => hash.digest('hex') };
}

async function sha256OfStream(stream: Readable): Promise<{ sha256: string; size: number }> {
  const hash = crypto.createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}

describe('S3FileStore on a real S3 peer (s3rver)', () => {
  it('streams a 12 MB put in parts and back: the bytes s3rver stored are the bytes put', async () => {
    const total = 12 * 1024 * 1024 + 12345;
    const source = randomStream(total, 'multi');
    const stored = await store.put(source.stream);
    expect(stored).toEqual({ sha256: source.digest(), size: total, created: true });
    store.keep(stored);

    const key = S3FileStore.keyOf(stored.sha256);
    expect(key).toBe(
      `files/${stored.sha256.slice(0, 2)}/${stored.sha256.slice(2, 4)}/${stored.sha256}`,
    );
    // On s3rver's disk, as stored (no aws-chunked framing, no checksum trailer).
    expect(await sha256OfStream(fs.createReadStream(peer.objectFile(key)))).toEqual({
      sha256: stored.sha256,
      size: total,
    });
    // And read back through a second client's GetObject, and through open().
    const other = s3Client(peer.settings);
    const answer = await other.send(new GetObjectCommand({ Bucket: peer.bucket, Key: key }));
    expect(await sha256OfStream(answer.Body as Readable)).toEqual({
      sha256: stored.sha256,
      size: total,
    });
    other.destroy();
    const opened = await store.open(stored.sha256);
    expect(opened.size).toBe(total);
    expect(await sha256OfStream(opened.stream)).toEqual({ sha256: stored.sha256, size: total });
    // The temp object of the streamed put is gone.
    const tmp = path.join(peer.directory, peer.bucket, 'tmp');
    expect(fs.existsSync(tmp) ? fs.readdirSync(tmp) : []).toEqual([]);
  });

  it('putHashed and putFile upload a local temp file under its name and delete the temp file', async () => {
    const bytes = crypto.randomBytes(300_000);
    const temp = path.join(tempDir, 'signed.pdf');
    fs.writeFileSync(temp, bytes);
    const hashed = await store.putHashed(temp, { sha256: sha256(bytes), size: bytes.length });
    expect(hashed).toEqual({ sha256: sha256(bytes), size: bytes.length, created: true });
    expect(fs.existsSync(temp)).toBe(false);
    store.keep(hashed);
    expect(sha256(fs.readFileSync(peer.objectFile(S3FileStore.keyOf(hashed.sha256))))).toBe(
      hashed.sha256,
    );

    fs.writeFileSync(temp, bytes);
    const again = await store.putFile(temp);
    expect(again).toEqual({ ...hashed, created: false });
    expect(fs.existsSync(temp)).toBe(false);
    store.keep(again);

    fs.writeFileSync(temp, bytes);
    await expect(
      store.putHashed(temp, {
        sha256: sha256(bytes),
        size: bytes.length + 1,
      }),
    ).rejects.toThrow(/not the size/);
    expect(fs.existsSync(temp)).toBe(false);
  });

  it('exists, remove of what a put created, and a shared put is not removed', async () => {
    const bytes = crypto.randomBytes(1000);
    const first = await store.put(Readable.from([bytes]));
    expect(await store.exists(first.sha256)).toBe(true);
    const second = await store.put(Readable.from([bytes]));
    expect(second.created).toBe(false);
    // The first put's rollback: another put of the same content is open, so the file stays.
    expect(await store.remove(first)).toBe(false);
    store.keep(second);
    expect(await store.exists(first.sha256)).toBe(true);

    const lone = await store.put(Readable.from([crypto.randomBytes(10)]));
    expect(await store.remove(lone)).toBe(true);
    expect(await store.exists(lone.sha256)).toBe(false);
    expect(fs.existsSync(peer.objectFile(S3FileStore.keyOf(lone.sha256)))).toBe(false);
    await expect(store.open(lone.sha256)).rejects.toMatchObject({ code: 'FILE_CONTENT_MISSING' });
  });

  it('withLocalFile gives the engine a verified temp copy and deletes it after', async () => {
    const bytes = crypto.randomBytes(70_000);
    const stored = await store.put(Readable.from([bytes]));
    store.keep(stored);
    let seen = '';
    const size = await store.withLocalFile(stored.sha256, async (file) => {
      seen = file;
      expect(path.dirname(file)).toBe(tempDir);
      return fs.statSync(file).size;
    });
    expect(size).toBe(bytes.length);
    expect(fs.existsSync(seen)).toBe(false);
    expect(fs.readdirSync(tempDir)).toEqual([]);

    // A copy whose bytes are not its name is refused (and deleted).
    const forged = sha256(Buffer.from('something else'));
    const client = s3Client(peer.settings);
    await client.send(
      new PutObjectCommand({ Bucket: peer.bucket, Key: S3FileStore.keyOf(forged), Body: bytes }),
    );
    client.destroy();
    await expect(store.withLocalFile(forged, async () => 'used')).rejects.toThrow(
      /does not match its content/,
    );
    expect(fs.readdirSync(tempDir)).toEqual([]);
  });

  it('lists its files with their put time, and removeUnreferenced spares recent and claimed ones', async () => {
    const old = await store.put(Readable.from([crypto.randomBytes(2000)]));
    store.keep(old);
    clock.advance(2 * 60 * 60_000);
    const claimed = await store.put(Readable.from([crypto.randomBytes(3000)]));
    const listed = new Map<string, { size: number; putAt: Date }>();
    for await (const entry of store.entries()) listed.set(entry.sha256, entry);
    expect(listed.get(old.sha256)).toEqual({
      sha256: old.sha256,
      size: 2000,
      putAt: new Date('2026-11-25T08:00:00Z'),
      aside: false,
    });
    const cutoff = new Date(clock.now().getTime() - 60 * 60_000);
    expect(
      await store.removeUnreferenced(claimed.sha256, new Date(clock.now().getTime() + 1)),
    ).toBe(null);
    store.keep(claimed);
    expect(await store.removeUnreferenced(claimed.sha256, cutoff)).toBe(null);
    expect(await store.removeUnreferenced(old.sha256, cutoff)).toBe(2000);
    expect(await store.exists(old.sha256)).toBe(false);
    expect(await store.exists(claimed.sha256)).toBe(true);
  });

  it('a presigned download names a Vietnamese file in Content-Disposition and serves the bytes', async () => {
    const bytes = crypto.randomBytes(5000);
    const stored = await store.put(Readable.from([bytes]));
    store.keep(stored);
    const disposition = contentDisposition(
      downloadName('Hợp đồng mua bán số 5/2026', 'application/pdf'),
    );
    const url = await store.presignDownload(
      stored.sha256,
      { contentType: 'application/pdf', contentDisposition: disposition },
      300,
    );
    expect(url).toMatch(/X-Amz-Signature=[0-9a-f]{64}/);
    expect(url).toMatch(/X-Amz-Expires=300/);
    const response = await fetch(url!);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-disposition')).toBe(disposition);
    expect(response.headers.get('content-disposition')).toContain(
      `filename*=UTF-8''${encodeURIComponent('Hợp đồng mua bán số 5_2026.pdf')}`,
    );
    expect(sha256(Buffer.from(await response.arrayBuffer()))).toBe(stored.sha256);
  });

  it('assertWritable passes on the bucket and fails once the bucket is gone', async () => {
    await peer.createBucket('esign-gone');
    const gone = new S3FileStore(
      s3Client(peer.settings),
      { bucket: 'esign-gone', presignedDownloads: false },
      tempDir,
      clock,
    );
    await gone.assertWritable();
    await gone.client.send(new DeleteBucketCommand({ Bucket: 'esign-gone' }));
    await expect(gone.assertWritable()).rejects.toMatchObject({ name: 'NoSuchBucket' });
    gone.client.destroy();
  });
});
