import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { statusOfCode } from '../../../src/http/errorStatuses';
import { EngineError } from '../../../src/pdf/engineError';
import { preparePdfSignature } from '../../../src/pdf/signatureUpdates';
import { decodePng, embedSignature, pageBox, readSignatureImage } from '../../../src/pdf/signing';
import { type Box, inkAndCaption, meet } from '../../support/signatureBox';
import { classicPdf, makeSigner, opensslCms, pdfsig, pdfsigSignatures, qpdfCheck } from './corpus';
import { encodePng, strokePng } from './pngs';

jest.setTimeout(120_000);

let dir: string;
let signer: { key: string; cert: string };
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signature-image-'));
  signer = makeSigner(dir);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const inflate = (data: Buffer) => zlib.inflateSync(data);

/** Rows behind filter byte 0 (what the decoder writes) back to bare samples. */
function samples(data: Buffer, rowBytes: number): Buffer {
  const rows = inflate(data);
  const out: Buffer[] = [];
  for (let at = 0; at < rows.length; at += rowBytes + 1) {
    expect(rows[at]).toBe(0);
    out.push(rows.subarray(at + 1, at + 1 + rowBytes));
  }
  return Buffer.concat(out);
}

describe('decodePng', () => {
  it.each([0, 1, 2, 3, 4] as const)(
    'undoes row filter %i: RGBA splits into RGB and alpha',
    (filter) => {
      const image = decodePng(strokePng(filter));
      expect(image).toMatchObject({ width: 40, height: 20, colorSpace: 'DeviceRGB' });
      const rgb = samples(image.color, 40 * 3);
      const alpha = samples(image.alpha!, 40);
      expect([...rgb.subarray(0, 3)]).toEqual([20, 40, 160]);
      expect(alpha[0]).toBe(0);
      expect(alpha[10 * 40 + 5]).toBe(255);
      expect(alpha[10 * 40 + 30]).toBe(128);
    },
  );

  it('palette with tRNS, 2-bit: colours from PLTE, transparency as alpha', () => {
    // Four pixels per byte: indexes 0 1 2 3.
    const image = decodePng(
      encodePng({
        width: 4,
        height: 1,
        colorType: 3,
        depth: 2,
        rows: [Buffer.from([0b00011011])],
        palette: Buffer.from([255, 0, 0, 0, 255, 0, 0, 0, 255, 9, 9, 9]),
        transparency: Buffer.from([0]),
      }),
    );
    expect([...samples(image.color, 12)]).toEqual([255, 0, 0, 0, 255, 0, 0, 0, 255, 9, 9, 9]);
    expect([...samples(image.alpha!, 4)]).toEqual([0, 255, 255, 255]);
  });

  it('1-bit gray scales to 0/255 and stays opaque (no SMask); 16-bit RGB keeps the high bytes', () => {
    const gray = decodePng(
      encodePng({ width: 8, height: 1, colorType: 0, depth: 1, rows: [Buffer.from([0b10100000])] }),
    );
    expect(gray.colorSpace).toBe('DeviceGray');
    expect(gray.alpha).toBeUndefined();
    expect([...samples(gray.color, 8)]).toEqual([255, 0, 255, 0, 0, 0, 0, 0]);
    const deep = decodePng(
      encodePng({
        width: 1,
        height: 1,
        colorType: 2,
        depth: 16,
        rows: [Buffer.from([0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc])],
      }),
    );
    expect([...samples(deep.color, 3)]).toEqual([0x12, 0x56, 0x9a]);
  });

  it.each([
    ['not a PNG at all', Buffer.from('GIF89a....'), 'IMAGE_TYPE_UNSUPPORTED', 415],
    [
      'a broken CRC',
      (() => {
        const png = strokePng();
        png[20] = png[20]! ^ 1;
        return png;
      })(),
      'IMAGE_UNREADABLE',
      422,
    ],
    ['a cut file', strokePng().subarray(0, 60), 'IMAGE_UNREADABLE', 422],
    [
      'interlacing',
      (() => {
        const png = Buffer.from(strokePng());
        png[28] = 1;
        // Fix IHDR's CRC so only the interlace method is refused.
        png.writeUInt32BE(zlib.crc32(png.subarray(12, 29)), 29);
        return png;
      })(),
      'IMAGE_UNREADABLE',
      422,
    ],
  ])('refuses %s with a clear code', (_, bytes, code, status) => {
    let error: unknown;
    try {
      readSignatureImage(bytes);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(EngineError);
    expect(error).toMatchObject({ code, field: 'signatureImage' });
    expect(statusOfCode(code)).toBe(status);
  });
});

describe('a PNG in a visible signature', () => {
  let source: string;
  beforeAll(async () => {
    source = path.join(dir, 'source.pdf');
    fs.writeFileSync(source, await classicPdf(2));
  });

  it('a JPEG (made by pdftoppm) is read from its frame header and kept as it is', () => {
    const out = path.join(dir, 'jpeg');
    execFileSync('pdftoppm', [
      '-jpeg',
      ...['-x', '0', '-y', '0', '-W', '40', '-H', '20', '-r', '72', '-singlefile'],
      source,
      out,
    ]);
    const jpeg = fs.readFileSync(`${out}.jpg`);
    const image = readSignatureImage(jpeg);
    expect(image).toMatchObject({ format: 'jpeg', width: 40, height: 20, colorSpace: 'DeviceRGB' });
    expect(image.format === 'jpeg' && image.jpeg.equals(jpeg)).toBe(true);
  });

  it('is drawn on the last page with its alpha as /SMask: pdfimages lists both, pdftoppm shows the stroke only', async () => {
    const box = pageBox(source);
    expect(box).toMatchObject({ page: 2, pageCount: 2, mediaBox: [0, 0, 595, 842] });
    const prepared = await preparePdfSignature(source, {
      signingTime: new Date('2026-11-26T04:00:00Z'),
      signerName: 'Lê Văn Cường',
      page: box.page,
      appearance: {
        rect: [100, 100, 300, 200],
        lines: [],
        image: readSignatureImage(strokePng()),
      },
      tempDir: dir,
    });
    await embedSignature(
      prepared.path,
      prepared,
      opensslCms(prepared.path, prepared.byteRange, signer, dir),
    );
    expect(qpdfCheck(prepared.path).ok).toBe(true);
    expect(pdfsigSignatures(pdfsig(prepared.path)).map((s) => s.valid)).toEqual([true]);

    const listing = execFileSync('pdfimages', ['-list', '-f', '2', '-l', '2', prepared.path], {
      encoding: 'utf8',
    });
    const rows = listing
      .split('\n')
      .slice(2)
      .filter((line) => line.trim() !== '')
      .map((line) => line.trim().split(/\s+/));
    // page num type width height color comp bpc enc ...
    expect(rows.map((r) => [r[2], r[3], r[4], r[5], r[6], r[7], r[8]])).toEqual([
      ['image', '40', '20', 'rgb', '3', '8', 'image'],
      ['smask', '40', '20', 'gray', '1', '8', 'image'],
    ]);
    // Extracted back, the colour image holds the stroke's blue.
    const prefix = path.join(dir, 'extracted');
    execFileSync('pdfimages', ['-png', '-f', '2', '-l', '2', prepared.path, prefix]);
    expect(fs.existsSync(`${prefix}-000.png`)).toBe(true);
    const extracted = decodePng(fs.readFileSync(`${prefix}-000.png`));
    expect([...samples(extracted.color, 40 * 3).subarray(0, 3)]).toEqual([20, 40, 160]);

    // Rendered at 72 dpi: the 200×100 box shows the 40×20 picture scaled 5×; the transparent
    // background stays white, the stroke (rows 8..12 of 20) is blue.
    const ppm = execFileSync('pdftoppm', ['-r', '72', '-f', '2', '-l', '2', prepared.path], {
      maxBuffer: 64 * 1024 * 1024,
    });
    const header = /^P6\s+(\d+)\s+(\d+)\s+255\s/.exec(ppm.toString('latin1', 0, 40))!;
    const width = Number(header[1]);
    const pixels = ppm.subarray(header[0].length);
    const at = (x: number, y: number) => [
      ...pixels.subarray((y * width + x) * 3, (y * width + x) * 3 + 3),
    ];
    const top = 842 - 200;
    // Stroke centre row 10 → y = top + 10.5*5; opaque left half.
    const [r, g, b] = at(120, top + 52);
    expect(b).toBeGreaterThan(120);
    expect(r).toBeLessThan(80);
    expect(g).toBeLessThan(100);
    // Half-transparent right half: lighter than the opaque half, still blue-ish.
    const [r2, , b2] = at(280, top + 52);
    expect(r2).toBeGreaterThan(r!);
    expect(b2).toBeGreaterThan(r2!);
    // Background (row 2 of the picture) is white: the alpha was honoured.
    expect(at(120, top + 12)).toEqual([255, 255, 255]);
  });
});

describe('a drawn picture keeps to its own part of the box', () => {
  let source: string;
  beforeAll(async () => {
    source = path.join(dir, 'layout-source.pdf');
    fs.writeFileSync(source, await classicPdf(1));
  });

  const lines = ['Ký bởi: Nguyễn Văn Ánh — 27/11/2026 20:26:05 (GMT+7)', 'Lý do: Ký hợp đồng'];

  it.each([
    ['a wide box (the default 170×60): picture on the left, text on the right', [36, 36, 206, 96]],
    ['a square box (120×120): picture above, text below', [200, 300, 320, 420]],
    ['a placement of 200×100', [320, 420, 520, 520]],
  ] as [string, Box][])(
    '%s: the picture never covers a text line, in the stream and rendered',
    async (_, rect) => {
      const prepared = await preparePdfSignature(source, {
        signingTime: new Date('2026-11-27T13:26:05Z'),
        signerName: 'Nguyễn Văn Ánh',
        appearance: { rect, lines, image: readSignatureImage(strokePng()) },
        tempDir: dir,
      });
      const width = rect[2] - rect[0];
      const height = rect[3] - rect[1];

      // The appearance stream as written (uncompressed): the picture's matrix and each text line.
      const pdf = fs.readFileSync(prepared.path, 'latin1');
      const placed = /q ([\d.]+) 0 0 ([\d.]+) ([\d.]+) ([\d.]+) cm \/Im1 Do Q\n(BT[\s\S]*?ET)/.exec(
        pdf,
      );
      expect(placed).not.toBeNull();
      const [w, h, x, y] = placed!.slice(1, 5).map(Number) as [number, number, number, number];
      const picture: Box = [x, y, x + w, y + h];
      expect(picture[0]).toBeGreaterThanOrEqual(0);
      expect(picture[1]).toBeGreaterThanOrEqual(0);
      expect(picture[2]).toBeLessThanOrEqual(width + 0.01);
      expect(picture[3]).toBeLessThanOrEqual(height + 0.01);
      const text = placed![5]!;
      const [, size, tx, ty] = /\/F1 ([\d.]+) Tf ([\d.]+) ([\d.]+) Td/.exec(text)!.map(Number);
      const moves = [...text.matchAll(/\n0 (-[\d.]+) Td/g)].map((m) => Number(m[1]));
      const shown = [...text.matchAll(/> Tj/g)].length;
      expect(shown).toBeGreaterThanOrEqual(2);
      let baseline = ty!;
      const textLines: Box[] = [[tx!, baseline - 0.3 * size!, width, baseline + size!]];
      for (const move of moves) {
        baseline += move;
        textLines.push([tx!, baseline - 0.3 * size!, width, baseline + size!]);
      }
      for (const line of textLines) {
        expect(line[1]).toBeGreaterThanOrEqual(-0.01);
        expect(meet(picture, line)).toBe(false);
      }

      // Rendered at 144 dpi: the stroke's blue pixels and the text's black ones lie apart (the
      // page's own drawing, rendered without the signature, left out).
      const { ink: blue, caption: black } = inkAndCaption(prepared.path, source, rect);
      expect(blue).not.toBeNull();
      expect(black).not.toBeNull();
      expect({ blue, black, meet: meet(blue!, black!) }).toMatchObject({ meet: false });
      fs.rmSync(prepared.path, { force: true });
    },
  );
});
