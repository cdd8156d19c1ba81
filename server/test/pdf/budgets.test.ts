import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EngineError } from '../../src/pdf/engineError';
import { inspectPdf } from '../../src/pdf/signing/activeContent';
import { type PdfLimits, withPdfLimits } from '../../src/pdf/signing/budget';
import { readSignatures } from '../../src/pdf/signing/readSignatures';
import { classicPdf } from '../signing/pdf/corpus';
import { incrementalUpdates, manyObjectStreams } from './hostilePdfs';

/**
 * Each read limit of pdf/signing/budget.ts on its own, on the reader itself (the worker pool's
 * tests run the same reads in threads): at the limit a file reads, past it 422 PDF_TOO_COMPLEX
 * names the limit.
 */

jest.setTimeout(60_000);

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-pdf-budget-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const write = (name: string, bytes: Buffer) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  return file;
};

function refusal(limits: Partial<PdfLimits>, read: () => unknown): EngineError {
  try {
    withPdfLimits(limits, read);
  } catch (error) {
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).code).toBe('PDF_TOO_COMPLEX');
    return error as EngineError;
  }
  throw new Error('read within the limits');
}

const mib = 1024 * 1024;

describe('PDF read limits', () => {
  it('decoded bytes of all streams together (256 MiB): twenty 15 MiB object streams', async () => {
    const file = write('streams.pdf', await manyObjectStreams(20, 15 * mib));
    expect(fs.statSync(file).size).toBeLessThan(400_000);
    const error = refusal({}, () => inspectPdf(file));
    expect(error.message).toContain('decode to more than 256 MiB in all');
    // Sixteen of them are 240 MiB: within.
    const fewer = write('fewer.pdf', await manyObjectStreams(16, 15 * mib));
    expect(inspectPdf(fewer).activeContent).toEqual([]);
  });

  it('object streams decoded', async () => {
    const file = write('count.pdf', await manyObjectStreams(5, 1024));
    expect(inspectPdf(file).activeContent).toEqual([]);
    const error = refusal({ objectStreams: 4 }, () => inspectPdf(file));
    expect(error.message).toContain('more than 4 object streams');
  });

  it('cross-reference sections', () => {
    const file = write('updates.pdf', incrementalUpdates(5));
    expect(readSignatures(file).revisions).toHaveLength(6);
    expect(withPdfLimits({ xrefSections: 6 }, () => readSignatures(file).revisions)).toHaveLength(
      6,
    );
    const error = refusal({ xrefSections: 5 }, () => readSignatures(file));
    expect(error.message).toContain('more than 5 cross-reference sections');
  });

  it('objects parsed', async () => {
    const file = write('pages.pdf', await classicPdf(20));
    const error = refusal({ objects: 10 }, () => inspectPdf(file));
    expect(error.message).toContain('more than 10 objects');
  });

  it('time', async () => {
    const file = write('long.pdf', await classicPdf(300));
    const error = refusal({ timeMs: 0 }, () => inspectPdf(file));
    expect(error.message).toContain('longer than 0 s');
  });
});
