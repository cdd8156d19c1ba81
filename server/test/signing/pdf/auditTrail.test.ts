import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { messagesOf } from '@esign/shared/messages';
import { statusOfCode } from '../../../src/http/errorStatuses';
import {
  type AuditTrailEvent,
  type AuditTrailInput,
  renderAuditTrail,
} from '../../../src/pdf/auditTrail';
import { EngineError } from '../../../src/pdf/engineError';
import { preparePdfSignature } from '../../../src/pdf/signatureUpdates';
import { embedSignature } from '../../../src/pdf/signing';
import { makeSigner, opensslCms, pdfsig, pdfsigSignatures, qpdfCheck } from './corpus';

jest.setTimeout(120_000);

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-trail-'));
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const start = new Date('2026-11-26T03:00:00Z');
const minutes = (n: number) => new Date(start.getTime() + n * 60_000);
const hash = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** The labels as the app gives them: the shared catalogue's. */
const labels = { vi: messagesOf('vi').pdf.auditTrail, en: messagesOf('en').pdf.auditTrail };

const trail = (
  events: AuditTrailEvent[],
  extra: Partial<Omit<AuditTrailInput, 'labels'>> = {},
): AuditTrailInput => ({
  labels,
  title: 'Nhật ký ký số — Hợp đồng mua bán',
  documentName: 'Hợp đồng số 42/2026.pdf',
  documentHash: hash,
  events,
  generatedAt: minutes(60),
  ...extra,
});

const text = (file: string, page?: number) =>
  execFileSync(
    'pdftotext',
    [...(page ? ['-f', String(page), '-l', String(page)] : []), file, '-'],
    { encoding: 'utf8' },
  );

describe('renderAuditTrail', () => {
  const threeEvents: AuditTrailEvent[] = [
    {
      at: start,
      actor: 'Nguyễn Văn Ánh',
      action: 'Tạo hồ sơ',
      details: 'Hồ sơ HĐ-2026/0042, 2 tệp',
    },
    {
      at: minutes(1),
      actor: 'Trần Thị Bình',
      action: 'Ký số bằng USB token',
      details: 'Chứng thư CN=Trần Thị Bình\nSố sê-ri 0x1234ABCD',
    },
    { at: minutes(2), actor: 'Hệ thống', action: 'Đóng dấu thời gian' },
  ];

  it('draws three events in Vietnamese that read back exactly, and the signer accepts the file', async () => {
    const out = path.join(dir, 'three.pdf');
    const result = await renderAuditTrail(trail(threeEvents), out);
    expect(result.pages).toBe(1);
    const content = text(out);
    for (const expected of [
      'Nhật ký ký số — Hợp đồng mua bán',
      'Hợp đồng số 42/2026.pdf',
      hash,
      'Nguyễn Văn Ánh',
      'Trần Thị Bình',
      'Ký số bằng USB token',
      'Số sê-ri 0x1234ABCD',
      'Đóng dấu thời gian',
      // 03:00 UTC is 10:00 in Vietnam.
      '26/11/2026 10:00:00',
      'Người thực hiện',
      'Actor',
      'Trang 1/1',
    ]) {
      expect(content).toContain(expected);
    }
    expect(qpdfCheck(out).ok).toBe(true);
    const fonts = execFileSync('pdffonts', [out], { encoding: 'utf8' });
    const rows = fonts.split('\n').filter((line) => /^[A-Z]{6}\+DejaVuSans/.test(line));
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.split(/\s+/).slice(4, 7)).toEqual(['yes', 'yes', 'yes']);

    // The same input gives the same bytes.
    const again = path.join(dir, 'three-again.pdf');
    await renderAuditTrail(trail(threeEvents), again);
    expect(fs.readFileSync(again).equals(fs.readFileSync(out))).toBe(true);

    const signer = makeSigner(dir);
    const prepared = await preparePdfSignature(out, {
      signingTime: minutes(61),
      signerName: 'Hệ thống ESign',
      tempDir: dir,
    });
    await embedSignature(
      prepared.path,
      prepared,
      opensslCms(prepared.path, prepared.byteRange, signer, dir),
    );
    expect(pdfsigSignatures(pdfsig(prepared.path)).map((s) => s.valid)).toEqual([true]);
    expect(qpdfCheck(prepared.path).ok).toBe(true);
  });

  it('breaks 500 events over numbered pages, every event once, header on each page', async () => {
    const events = Array.from({ length: 500 }, (_, i) => ({
      at: minutes(i),
      actor: `Người dùng #${i + 1}`,
      action: i % 2 ? 'Xem tài liệu' : 'Tải xuống',
      details: i % 50 === 0 ? 'Ghi chú dài. '.repeat(40) : undefined,
    }));
    const out = path.join(dir, 'five-hundred.pdf');
    const { pages } = await renderAuditTrail(trail(events), out);
    expect(pages).toBeGreaterThan(3);
    expect(qpdfCheck(out).ok).toBe(true);
    const seen: number[] = [];
    for (let page = 1; page <= pages; page++) {
      const content = text(out, page);
      expect(content).toContain(`Trang ${page}/${pages}`);
      expect(content).toContain(hash);
      expect(content).toContain('Nhật ký ký số — Hợp đồng mua bán');
      for (const match of content.matchAll(/Người dùng #(\d+)/g)) seen.push(Number(match[1]));
    }
    expect(seen).toEqual(events.map((_, i) => i + 1));
  });

  it('continues a row taller than a page on the next one', async () => {
    const words = Array.from({ length: 1200 }, (_, i) => `từ${i + 1}`).join(' ');
    const out = path.join(dir, 'tall-row.pdf');
    const { pages } = await renderAuditTrail(
      trail([{ at: start, actor: 'Nguyễn Văn Ánh', action: 'Ghi chú', details: words }]),
      out,
    );
    expect(pages).toBeGreaterThan(1);
    expect(qpdfCheck(out).ok).toBe(true);
    const all = text(out);
    expect(all).toContain('từ1 ');
    expect(all).toContain('từ1200');
    expect(all).toContain(`Trang ${pages}/${pages}`);
    // The continued part says whose row it is.
    expect(text(out, 2)).toMatch(/^1\n\(tiếp\ncont\.\)$/m);
  });

  it('English first on request; characters the font lacks print as "?"', async () => {
    const out = path.join(dir, 'english.pdf');
    await renderAuditTrail(
      trail([{ at: start, actor: 'Lý 李', action: 'Sign', details: 'ok' }], { locale: 'en' }),
      out,
    );
    const content = text(out);
    expect(content).toContain('2026-11-26 10:00:00');
    expect(content).toContain('Lý ?');
    expect(content).toContain('Page 1/1 · Trang 1/1');
  });

  it('refuses input out of bounds with 400 VALIDATION_ERROR and writes nothing', async () => {
    const out = path.join(dir, 'refused.pdf');
    const error = await renderAuditTrail(
      trail([{ at: new Date(Number.NaN), actor: 'A', action: 'B' }]),
      out,
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EngineError);
    const { code, field } = error as EngineError;
    expect([statusOfCode(code), code, field]).toEqual([400, 'VALIDATION_ERROR', 'events.0.at']);
    expect(fs.existsSync(out)).toBe(false);
  });
});

describe('start-up cost', () => {
  it('importing the signing layer and the renderer loads neither fontkit nor pdf-lib', () => {
    const root = path.resolve(__dirname, '../../../..');
    const script = `
      require('./server/src/pdf/signing/index.ts');
      require('./server/src/pdf/auditTrail/index.ts');
      const heavy = /node_modules\\/(@pdf-lib\\/fontkit|pdf-lib)\\//;
      const loaded = () => Object.keys(require.cache).filter((file) => heavy.test(file)).length;
      const before = loaded();
      require('./server/src/pdf/fonts/dejaVuSans.ts')
        .loadFontkit()
        .then(() => console.log(JSON.stringify([before, loaded()])));`;
    const output = execFileSync(process.execPath, ['--import', 'tsx', '-e', script], {
      cwd: root,
      encoding: 'utf8',
    });
    // Nothing at import; fontkit once a font is first needed.
    expect(JSON.parse(output)).toEqual([0, 1]);
  });
});
