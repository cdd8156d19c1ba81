import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { DeleteBucketCommand } from '@aws-sdk/client-s3';
import { onSqlite } from '../../../test/support/onSqlite';
import { recordIssuedSecret } from '../../../test/support/runLog';
import type { OfflineAction } from '../../src/admin/command';
import { storageCommands } from '../../src/admin/commands/storage';
import { createBackup } from '../../src/backup/backup';
import { loadConfig } from '../../src/platform/config';
import { storedFiles as localFiles } from '../../src/storage/localFileStore';
import { S3FileStore } from '../../src/storage/s3FileStore';
import { sweepFileStore } from '../../src/storage/sweep';
import {
  type ContractWorld,
  contractPdf,
  contractsPath,
  openContractWorld,
} from '../contracts/fixtures';
import { dataOf, openSessionWorld, signingPath } from '../sessions/world';
import { pdfsig, pdfsigSignatures } from '../signing/pdf/corpus';
import { strokePng } from '../signing/pdf/pngs';
import { createHarness } from '../support/harness';
import { type S3Peer, startS3Peer } from '../support/s3Peer';

jest.setTimeout(180_000);

const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');
const hourMs = 60 * 60_000;

let peer: S3Peer;

beforeAll(async () => {
  peer = await startS3Peer();
});

afterAll(async () => {
  await peer?.close();
});

async function downloadOriginal(world: ContractWorld, id: string): Promise<Response> {
  return world.request('GET', `${contractsPath}/${id}/download?type=original`, world.acme.orgKey);
}

/** Stored files under the harness's DATA_DIR/files (none when the bucket holds them). */
async function localStored(world: ContractWorld): Promise<string[]> {
  const found: string[] = [];
  for await (const file of localFiles(path.join(world.h.dataDir, 'files'))) found.push(file.sha256);
  return found;
}

describe('FILE_STORE=s3 through the API (s3rver)', () => {
  let world: ContractWorld;
  beforeAll(async () => {
    world = await openContractWorld({ FILE_STORE: 's3', ...peer.env });
  });
  afterAll(async () => {
    await world?.close();
  });

  it('a PDF uploaded through the API lands in the bucket and downloads back byte-identical', async () => {
    const bytes = await contractPdf(`s3 ${crypto.randomUUID()}`);
    const id = await world.create({ file: { name: 'hop-dong.pdf', bytes } });
    expect(world.h.deps.files.kind).toBe('s3');
    expect(await localStored(world)).toEqual([]);
    const object = peer.objectFile(S3FileStore.keyOf(sha256(bytes)));
    expect(fs.readFileSync(object).equals(bytes)).toBe(true);

    const response = await downloadOriginal(world, id);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe(String(bytes.length));
    expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('the sweep deletes an old unreferenced object and keeps referenced and recent ones', async () => {
    const bytes = await contractPdf(`kept ${crypto.randomUUID()}`);
    await world.create({ file: { name: 'hop-dong.pdf', bytes } });
    const { files } = world.h.deps;
    const orphan = await files.put(Readable.from([crypto.randomBytes(4096)]));
    files.keep(orphan);
    world.h.clock.advance(2 * hourMs);
    const recent = await files.put(Readable.from([crypto.randomBytes(2048)]));
    files.keep(recent);

    const dry = await sweepFileStore(world.h.deps, { dryRun: true });
    expect(dry.deletedFiles).toEqual([{ sha256: orphan.sha256, size: 4096 }]);
    expect(await files.exists(orphan.sha256)).toBe(true);

    const report = await sweepFileStore(world.h.deps, { dryRun: false });
    expect(report.deletedFiles).toEqual([{ sha256: orphan.sha256, size: 4096 }]);
    expect(report.missing).toBe(0);
    expect(await files.exists(orphan.sha256)).toBe(false);
    expect(fs.existsSync(peer.objectFile(S3FileStore.keyOf(orphan.sha256)))).toBe(false);
    expect(await files.exists(recent.sha256)).toBe(true);
    expect(await files.exists(sha256(bytes))).toBe(true);
  });

  it('S3_PRESIGNED_DOWNLOADS=1: a download answers 302 to the bucket with the Vietnamese file name', async () => {
    const presigned = await openContractWorld({
      FILE_STORE: 's3',
      S3_PRESIGNED_DOWNLOADS: '1',
      ...peer.env,
    });
    try {
      const bytes = await contractPdf(`presigned ${crypto.randomUUID()}`);
      const id = await presigned.create({
        title: 'Hợp đồng mua bán',
        file: { name: 'hop-dong.pdf', bytes },
      });
      const response = await downloadOriginal(presigned, id);
      expect(response.status).toBe(302);
      expect(response.headers.get('cache-control')).toBe('private, no-store');
      const location = response.headers.get('location')!;
      expect(location.startsWith(`${peer.endpoint}/${peer.bucket}/files/`)).toBe(true);
      expect(location).toMatch(/X-Amz-Expires=300&/);
      // A credential: the run's log scan proves no log line holds it.
      recordIssuedSecret(/X-Amz-Signature=([0-9a-f]{64})/.exec(location)![1]!, 'presigned S3 URL');
      const fromBucket = await fetch(location);
      expect(fromBucket.status).toBe(200);
      expect(fromBucket.headers.get('content-disposition')).toBe(
        `attachment; filename="Hop dong mua ban.pdf"; filename*=UTF-8''${encodeURIComponent('Hợp đồng mua bán.pdf')}`,
      );
      expect(Buffer.from(await fromBucket.arrayBuffer()).equals(bytes)).toBe(true);
    } finally {
      await presigned.close();
    }
  });

  // On PostgreSQL, admin backup refuses: the database is PostgreSQL's to back up.
  onSqlite.it(
    'admin backup on FILE_STORE=s3 writes the database only and says the files are in the bucket',
    async () => {
      await world.create({});
      const out = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-s3-backup-'));
      try {
        const report = await createBackup(world.h.deps.config, path.join(out, 'b'), world.h.clock);
        expect(report).toMatchObject({ filesInBucket: true, storedFiles: 0, missingFiles: [] });
        const manifest = JSON.parse(
          fs.readFileSync(path.join(out, 'b', 'manifest.json'), 'utf8'),
        ) as {
          entries: { path: string }[];
        };
        expect(manifest.entries.filter((entry) => entry.path.startsWith('files/'))).toEqual([]);
        expect(manifest.entries.map((entry) => entry.path)).toContain('esign.sqlite');
      } finally {
        fs.rmSync(out, { recursive: true, force: true });
      }
    },
  );

  it('/readyz fails the fileStore check once the bucket is gone', async () => {
    await peer.createBucket('esign-ready');
    const ready = await openContractWorld({
      FILE_STORE: 's3',
      ...peer.env,
      S3_BUCKET: 'esign-ready',
    });
    try {
      const before = await ready.h.request('GET', '/readyz');
      expect(before.status).toBe(200);
      expect(((await before.json()) as { checks: Record<string, string> }).checks.fileStore).toBe(
        'ok',
      );
      const client = (ready.h.deps.files as S3FileStore).client;
      await client.send(new DeleteBucketCommand({ Bucket: 'esign-ready' }));
      const after = await ready.h.request('GET', '/readyz');
      expect(after.status).toBe(503);
      expect(((await after.json()) as { checks: Record<string, string> }).checks.fileStore).toBe(
        'failed',
      );
    } finally {
      await ready.close();
    }
  });
});

describe('admin storage copy --to s3', () => {
  it('copies a data directory’s files into the bucket, idempotently; FILE_STORE=s3 then serves the same downloads', async () => {
    await peer.createBucket('esign-copy');
    const local = await openContractWorld();
    const bytes = [
      await contractPdf(`copy one ${crypto.randomUUID()}`),
      await contractPdf(`copy two ${crypto.randomUUID()}`),
    ];
    const ids = [
      await local.create({ file: { name: 'mot.pdf', bytes: bytes[0]! } }),
      await local.create({ file: { name: 'hai.pdf', bytes: bytes[1]! } }),
    ];
    const count = (await localStored(local)).length;
    expect(count).toBeGreaterThanOrEqual(2);

    const env = {
      DATA_DIR: local.h.dataDir,
      APP_ENV: 'development',
      ...peer.env,
      S3_BUCKET: 'esign-copy',
    };
    const copy = storageCommands.find((command) => command.name === 'storage copy')!;
    const run = () =>
      (copy.accept({ to: 's3' }, new Date()) as OfflineAction).offline({
        config: loadConfig(env),
      });
    const first = await run();
    expect(first.json).toMatchObject({ files: count, copied: count, present: 0, failed: [] });
    const again = await run();
    expect(again.json).toMatchObject({ files: count, copied: 0, present: count, failed: [] });
    expect(again.lines[0]).toContain(`${count} local files: 0 copied`);
    expect(() => copy.accept({ to: 'gcs' }, new Date())).toThrow(/--to must be/);

    // A damaged object in the bucket (same size, other bytes) is found by the read-back and
    // uploaded again.
    const onDisk = path.join(
      peer.directory,
      'esign-copy',
      `${S3FileStore.keyOf(sha256(bytes[0]!))}._S3rver_object`,
    );
    fs.writeFileSync(onDisk, Buffer.alloc(bytes[0]!.length, 0x20));
    const repaired = await run();
    expect(repaired.json).toMatchObject({ copied: 1, present: count - 1, failed: [] });
    expect(fs.readFileSync(onDisk).equals(bytes[0]!)).toBe(true);

    // The same database on FILE_STORE=s3, with the local files gone: the downloads are the same.
    fs.rmSync(path.join(local.h.dataDir, 'files'), { recursive: true, force: true });
    const onBucket = createHarness({
      DATA_DIR: local.h.dataDir,
      FILE_STORE: 's3',
      ...peer.env,
      S3_BUCKET: 'esign-copy',
    });
    try {
      for (const [index, id] of ids.entries()) {
        const response = await onBucket.request(
          'GET',
          `${contractsPath}/${id}/download?type=original`,
          { headers: { 'x-api-key': local.acme.orgKey } },
        );
        expect(response.status).toBe(200);
        expect(Buffer.from(await response.arrayBuffer()).equals(bytes[index]!)).toBe(true);
      }
    } finally {
      await onBucket.runtime.database.close();
      await local.close();
    }
  });
});

describe('a signing walk on FILE_STORE=s3', () => {
  it('image_signature signs a contract whose files live in the bucket; pdfsig finds the signature valid', async () => {
    const world = await openSessionWorld({ FILE_STORE: 's3', ...peer.env });
    try {
      const contractId = await world.sentContract(
        [{ name: 'Lê Văn Cường', email: 'cuong@partner.example', order: 1 }],
        { title: 'Hợp đồng trên S3' },
      );
      await world.deliver();
      const image = await dataOf<{ sessionId: string; signingUrl: string }>(
        await world.initiate(contractId, 'cuong@partner.example', 'image_signature'),
      );
      const page = await dataOf<{ pageCredential: string }>(
        await world.h.request('POST', `${signingPath}/page-credential`, {
          json: { token: image.signingUrl.split('/').at(-1)! },
        }),
      );
      const picture = `data:image/png;base64,${strokePng().toString('base64')}`;
      const signed = await dataOf<{ contractStatus: string }>(
        await world.step(
          image.sessionId,
          'confirm',
          { signatureImage: picture },
          {
            page: page.pageCredential,
          },
        ),
      );
      expect(signed.contractStatus).toBe('completed');
      const file = await world.signedFile(contractId, 'signed-s3.pdf');
      const verdicts = pdfsigSignatures(pdfsig(file));
      expect(verdicts[0]!.valid).toBe(true);
      // The signed file is the bucket's object, byte for byte; nothing stored locally.
      const signedBytes = fs.readFileSync(file);
      expect(
        fs
          .readFileSync(peer.objectFile(S3FileStore.keyOf(sha256(signedBytes))))
          .equals(signedBytes),
      ).toBe(true);
      expect(await localStored(world)).toEqual([]);
      expect(fs.readdirSync(world.h.deps.files.tempDir)).toEqual([]);
    } finally {
      await world.close();
    }
  });
});
