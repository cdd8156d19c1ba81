import { once } from 'node:events';
import zlib from 'node:zlib';
import { PDFDocument, PDFName, PDFString, StandardFonts } from 'pdf-lib';

/**
 * Hostile PDFs, written byte by byte by the tests (never by the engine's writer): each aims at
 * one way a file can make a reader loop, recurse, allocate or run code.
 */

type Part = string | Buffer;

const bytes = (part: Part) => (typeof part === 'string' ? Buffer.from(part, 'latin1') : part);

/**
 * A file of numbered objects (`n 0 obj ... endobj`, written in order, object i at index i - 1)
 * closed by a classic cross-reference table and trailer. `table` replaces the table's text.
 */
export function classicFile(
  objects: Part[],
  options: { trailer?: string; table?: (offsets: number[]) => string } = {},
): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let length = parts[0]!.length;
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(length);
    for (const part of [`${i + 1} 0 obj\n`, object, '\nendobj\n']) {
      const b = bytes(part);
      parts.push(b);
      length += b.length;
    }
  });
  const table =
    options.table?.(offsets) ??
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets
      .map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`)
      .join('')}`;
  const trailer = options.trailer ?? `trailer\n<</Size ${objects.length + 1}/Root 1 0 R>>\n`;
  parts.push(Buffer.from(`${table}${trailer}startxref\n${length}\n%%EOF\n`, 'latin1'));
  return Buffer.concat(parts);
}

const catalog = '<</Type/Catalog/Pages 2 0 R>>';
const pages = '<</Type/Pages/Kids[3 0 R]/Count 1>>';
const page = '<</Type/Page/Parent 2 0 R/MediaBox[0 0 595 842]>>';

/** A stream object's text: its dictionary entries, /Length and the data. */
function stream(entries: string, data: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(`<<${entries}/Length ${data.length}>>stream\n`, 'latin1'),
    data,
    Buffer.from('\nendstream', 'latin1'),
  ]);
}

/** An xref stream's rows, each field big-endian in its width. */
function rows(widths: number[], entries: number[][]): Buffer {
  const rowLength = widths.reduce((a, b) => a + b, 0);
  const data = Buffer.alloc(rowLength * entries.length);
  entries.forEach((entry, r) => {
    let at = r * rowLength;
    entry.forEach((value, f) => {
      for (let i = widths[f]! - 1; i >= 0; i--)
        data[at + i] = (value >> (8 * (widths[f]! - 1 - i))) & 0xff;
      at += widths[f]!;
    });
  });
  return data;
}

/**
 * The audit's 674 bytes: a one-page file whose only cross-reference section is an xref stream
 * with /W [0 0 0] (rows of no bytes) and an /Index of two billion entries. A reader that trusts
 * it fills a table without reading a byte. A comment pads it to the same size.
 */
export function zeroWidthXrefStream(padding = 373): Buffer {
  const head = classicFile([catalog, pages, page], { table: () => '', trailer: '' });
  // Drop the empty table, trailer and startxref the helper wrote: the xref stream replaces them.
  const body = head.subarray(0, head.indexOf('startxref'));
  const xrefAt = body.length;
  const xref = Buffer.concat([
    Buffer.from('4 0 obj\n', 'latin1'),
    stream('/Type/XRef/Size 5/W[0 0 0]/Index[0 2147483647]/Root 1 0 R', Buffer.alloc(0)),
    Buffer.from(`\nendobj\n%${' '.repeat(padding)}\nstartxref\n${xrefAt}\n%%EOF\n`, 'latin1'),
  ]);
  return Buffer.concat([body, xref]);
}

/** Deflates `size` zero bytes after `prefix`, a MiB at a time: the test never holds them whole. */
async function deflateZeros(prefix: Buffer, size: number): Promise<Buffer> {
  const deflate = zlib.createDeflate({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => out.push(chunk));
  const done = once(deflate, 'end');
  deflate.write(prefix);
  const mib = Buffer.alloc(1024 * 1024);
  for (let written = 0; written < size; written += mib.length) {
    if (!deflate.write(mib.subarray(0, Math.min(mib.length, size - written)))) {
      await once(deflate, 'drain');
    }
  }
  deflate.end();
  await done;
  return Buffer.concat(out);
}

/**
 * A file whose catalog and page tree sit in an object stream that inflates to `inflated` bytes
 * (256 MiB: about 261 KB on disk), so that reading the catalog decodes the whole stream.
 */
export async function objectStreamBomb(inflated = 256 * 1024 * 1024): Promise<Buffer> {
  const objects = [catalog, pages, page];
  let header = '';
  let body = '';
  objects.forEach((object, i) => {
    header += `${i + 1} ${body.length} `;
    body += `${object}\n`;
  });
  const first = header.length;
  const data = await deflateZeros(Buffer.from(header + body, 'latin1'), inflated);
  const start = Buffer.from('%PDF-1.7\n', 'latin1');
  const objStm = Buffer.concat([
    Buffer.from('4 0 obj\n', 'latin1'),
    stream(`/Type/ObjStm/N 3/First ${first}/Filter/FlateDecode`, data),
    Buffer.from('\nendobj\n', 'latin1'),
  ]);
  const xrefAt = start.length + objStm.length;
  const table = rows(
    [1, 4, 2],
    [
      [0, 0, 65535],
      [2, 4, 0],
      [2, 4, 1],
      [2, 4, 2],
      [1, start.length, 0],
      [1, xrefAt, 0],
    ],
  );
  const xref = Buffer.concat([
    Buffer.from('5 0 obj\n', 'latin1'),
    stream('/Type/XRef/Size 6/W[1 4 2]/Root 1 0 R', table),
    Buffer.from(`\nendobj\nstartxref\n${xrefAt}\n%%EOF\n`, 'latin1'),
  ]);
  return Buffer.concat([start, objStm, xref]);
}

/** Arrays nested `depth` deep in the catalog. */
export function deepNesting(depth = 10_000): Buffer {
  return classicFile([
    `<</Type/Catalog/Pages 2 0 R/Deep ${'['.repeat(depth)}${']'.repeat(depth)}>>`,
    pages,
    page,
  ]);
}

/** An xref stream listing `entries` objects in 3-byte rows: small on disk, huge as a table. */
export function hugeXrefStream(entries = 3_000_000): Buffer {
  const start = classicFile([catalog, pages, page], { table: () => '', trailer: '' });
  const body = start.subarray(0, start.indexOf('startxref'));
  const offsets = [...body.toString('latin1').matchAll(/(\d+) 0 obj/g)].map((m) => m.index!);
  const xrefAt = body.length;
  // Rows [type, offset]: the three real objects, the xref stream, then free entries.
  const data = Buffer.alloc(entries * 3);
  const put = (n: number, type: number, offset: number) => {
    data[n * 3] = type;
    data.writeUInt16BE(offset, n * 3 + 1);
  };
  for (const [i, offset] of offsets.entries()) put(i + 1, 1, offset);
  put(4, 1, xrefAt);
  const xref = Buffer.concat([
    Buffer.from('4 0 obj\n', 'latin1'),
    stream(
      `/Type/XRef/Size ${entries}/W[1 2 0]/Root 1 0 R/Filter/FlateDecode`,
      zlib.deflateSync(data),
    ),
    Buffer.from(`\nendobj\nstartxref\n${xrefAt}\n%%EOF\n`, 'latin1'),
  ]);
  return Buffer.concat([body, xref]);
}

/** A classic table whose subsection claims five million entries: more than the file holds. */
export function overlongXrefTable(): Buffer {
  return classicFile([catalog, pages, page], {
    table: (offsets) =>
      `xref\n0 5000000\n0000000000 65535 f \n${offsets
        .map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`)
        .join('')}`,
  });
}

/** The catalog lives in object stream 4, which the xref says is inside object stream 4. */
export function selfContainedObjectStream(): Buffer {
  const start = Buffer.from('%PDF-1.7\n', 'latin1');
  const table = rows(
    [1, 4, 2],
    [
      [0, 0, 65535],
      [2, 4, 0],
      [2, 4, 1],
      [2, 4, 2],
      [2, 4, 3],
      [1, start.length, 0],
    ],
  );
  const xref = Buffer.concat([
    Buffer.from('5 0 obj\n', 'latin1'),
    stream('/Type/XRef/Size 6/W[1 4 2]/Root 1 0 R', table),
    Buffer.from(`\nendobj\nstartxref\n${start.length}\n%%EOF\n`, 'latin1'),
  ]);
  return Buffer.concat([start, xref]);
}

/** The page's content stream 4 takes its /Length from object 5, which takes it from 4. */
export function lengthLoop(): Buffer {
  return classicFile([
    catalog,
    pages,
    '<</Type/Page/Parent 2 0 R/MediaBox[0 0 595 842]/Contents 4 0 R>>',
    '<</Length 5 0 R>>stream\nBT ET\nendstream',
    '<</Length 4 0 R>>stream\nBT ET\nendstream',
  ]);
}

/** A stream whose /Length is itself. */
export function selfLength(): Buffer {
  return classicFile([
    catalog,
    pages,
    '<</Type/Page/Parent 2 0 R/MediaBox[0 0 595 842]/Contents 4 0 R>>',
    '<</Length 4 0 R>>stream\nBT ET\nendstream',
  ]);
}

/** A one-page contract made by pdf-lib, changed by `edit` before it is saved. */
async function contractWith(edit: (doc: PDFDocument) => Promise<void> | void): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage([595, 842]).drawText('Contract', { x: 50, y: 780, size: 14, font });
  await edit(doc);
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

/** JavaScript run at opening (/OpenAction) and a link that launches a program (/Launch). */
export function javaScriptAndLaunch(): Promise<Buffer> {
  return contractWith((doc) => {
    const { context } = doc;
    doc.catalog.set(
      PDFName.of('OpenAction'),
      context.obj({ S: 'JavaScript', JS: PDFString.of('app.alert("hi")') }),
    );
    const link = context.register(
      context.obj({
        Type: 'Annot',
        Subtype: 'Link',
        Rect: [50, 700, 200, 720],
        A: { S: 'Launch', F: PDFString.of('cmd.exe') },
      }),
    );
    doc.getPage(0).node.set(PDFName.of('Annots'), context.obj([link]));
  });
}

/** Only a /Launch action, on a link. */
export function launchOnly(): Promise<Buffer> {
  return contractWith((doc) => {
    const { context } = doc;
    const link = context.register(
      context.obj({
        Type: 'Annot',
        Subtype: 'Link',
        Rect: [50, 700, 200, 720],
        A: { S: 'Launch', F: PDFString.of('x.exe') },
      }),
    );
    doc.getPage(0).node.set(PDFName.of('Annots'), context.obj([link]));
  });
}

/** A document-level script (/Names /JavaScript), as pdf-lib's addJavaScript writes it. */
export function documentScript(): Promise<Buffer> {
  return contractWith((doc) => doc.addJavaScript('main', 'this.print();'));
}

/** An attached program (/EmbeddedFiles). */
export function embeddedExecutable(): Promise<Buffer> {
  return contractWith((doc) =>
    doc.attach(Buffer.from('MZ\x90\x00'), 'invoice.exe', {
      mimeType: 'application/x-msdownload',
    }),
  );
}

/** A control: a web link (/URI) is no active content. */
export function webLink(): Promise<Buffer> {
  return contractWith((doc) => {
    const { context } = doc;
    const link = context.register(
      context.obj({
        Type: 'Annot',
        Subtype: 'Link',
        Rect: [50, 700, 200, 720],
        A: { S: 'URI', URI: PDFString.of('https://example.com/terms') },
      }),
    );
    doc.getPage(0).node.set(PDFName.of('Annots'), context.obj([link]));
  });
}

/**
 * `streams` object streams of one object each, padded with zeros to `inflatedEach` bytes; the
 * catalog lists the objects, so reading every object decodes every stream.
 */
export async function manyObjectStreams(streams: number, inflatedEach: number): Promise<Buffer> {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n', 'latin1')];
  let length = parts[0]!.length;
  const entries: number[][] = [[0, 0, 65535]];
  const add = (num: number, text: Buffer) => {
    entries[num] = [1, length, 0];
    const object = Buffer.concat([
      Buffer.from(`${num} 0 obj\n`, 'latin1'),
      text,
      Buffer.from('\nendobj\n', 'latin1'),
    ]);
    parts.push(object);
    length += object.length;
  };
  const first = 4;
  const listed = Array.from({ length: streams }, (_, i) => `${first + 2 * i} 0 R`).join(' ');
  add(1, Buffer.from(`<</Type/Catalog/Pages 2 0 R/Listed [${listed}]>>`, 'latin1'));
  add(2, Buffer.from(pages, 'latin1'));
  add(3, Buffer.from(page, 'latin1'));
  for (let i = 0; i < streams; i++) {
    const member = first + 2 * i;
    const header = `${member} 0 `;
    const data = await deflateZeros(Buffer.from(`${header}<</N ${i}>>\n`, 'latin1'), inflatedEach);
    add(member + 1, stream(`/Type/ObjStm/N 1/First ${header.length}/Filter/FlateDecode`, data));
    entries[member] = [2, member + 1, 0];
  }
  const xrefNum = first + 2 * streams;
  entries[xrefNum] = [1, length, 0];
  const xref = Buffer.concat([
    Buffer.from(`${xrefNum} 0 obj\n`, 'latin1'),
    stream(`/Type/XRef/Size ${xrefNum + 1}/W[1 4 2]/Root 1 0 R`, rows([1, 4, 2], entries)),
    Buffer.from(`\nendobj\nstartxref\n${length}\n%%EOF\n`, 'latin1'),
  ]);
  return Buffer.concat([...parts, xref]);
}

/** A one-page file followed by `updates` incremental updates, each rewriting the catalog. */
export function incrementalUpdates(updates: number): Buffer {
  let file = classicFile([catalog, pages, page]);
  for (let i = 0; i < updates; i++) {
    const previous = /startxref\n(\d+)\n%%EOF\n$/.exec(file.toString('latin1'))![1];
    const objectAt = file.length;
    const object = `1 0 obj\n<</Type/Catalog/Pages 2 0 R/Update ${i + 1}>>\nendobj\n`;
    const xrefAt = objectAt + object.length;
    const tail = `xref\n1 1\n${String(objectAt).padStart(10, '0')} 00000 n \ntrailer\n<</Size 4/Root 1 0 R/Prev ${previous}>>\nstartxref\n${xrefAt}\n%%EOF\n`;
    file = Buffer.concat([file, Buffer.from(object + tail, 'latin1')]);
  }
  return file;
}
