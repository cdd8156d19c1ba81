import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EngineError } from '../../../src/pdf/engineError';
import { streamChunks } from '../../../src/pdf/signing/fileChunks';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'file-chunks-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('streamChunks', () => {
  it('hands over and copies exactly the range, across many chunks, at the target offset', async () => {
    const bytes = crypto.randomBytes(20 * 1024 * 1024 + 12345);
    const sourcePath = path.join(dir, 'source.bin');
    fs.writeFileSync(sourcePath, bytes);
    const targetPath = path.join(dir, 'target.bin');
    const [start, length, offset] = [777, bytes.length - 1000, 5];
    const hash = crypto.createHash('sha256');
    const source = await fs.promises.open(sourcePath, 'r');
    const target = await fs.promises.open(targetPath, 'w');
    try {
      await streamChunks(source, start, length, (chunk) => hash.update(chunk), {
        file: target,
        offset,
      });
    } finally {
      await source.close();
      await target.close();
    }
    const range = bytes.subarray(start, start + length);
    expect(hash.digest().equals(crypto.createHash('sha256').update(range).digest())).toBe(true);
    const copied = fs.readFileSync(targetPath);
    expect(copied.length).toBe(offset + length);
    expect(copied.subarray(offset).equals(range)).toBe(true);
  });

  it('refuses (422) a range the file does not reach, with nothing left running', async () => {
    const sourcePath = path.join(dir, 'short.bin');
    fs.writeFileSync(sourcePath, crypto.randomBytes(3 * 1024 * 1024));
    const source = await fs.promises.open(sourcePath, 'r');
    const target = await fs.promises.open(path.join(dir, 'short-copy.bin'), 'w');
    try {
      const error = await streamChunks(source, 0, 9 * 1024 * 1024, () => undefined, {
        file: target,
        offset: 0,
      }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(EngineError);
      expect((error as EngineError).code).toBe('PDF_UNREADABLE');
    } finally {
      await source.close();
      await target.close();
    }
  });
});
