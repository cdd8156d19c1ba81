import fs from 'node:fs';
import path from 'node:path';
import fontkit from '@pdf-lib/fontkit';
import { PDFDocument } from 'pdf-lib';
import type { Page } from 'playwright-core';
import { recordIssuedSecret } from '../../../test/support/runLog';
import { presignFileUrl } from '../../src/files/presign';
import { dossierFiles } from '../../src/files/queries';
import { assetUrl } from '../../src/web/assets';
import { classicPdf } from '../signing/pdf/corpus';
import { type BrowserWorld, openBrowserWorld } from '../support/browser';
import { createDossier, createProcess } from '../support/dossiers';
import { createHarness, type Harness, type SeededTenant, seedTenant } from '../support/harness';

/**
 * The PDF preview (server/web/app/preview.ts + pdf.js served by us) in Debian's Chromium, under
 * the app's strict CSP: a dossier file is drawn as canvases with real pixels, navigable by page
 * and zoom, with no console error (a CSP refusal is one); a file that cannot be read leaves the
 * download link and says so.
 *
 * The preview is placed into a real page of the app (its CSP, its layout) by the test until the
 * dossier page that shows files is merged: the element is the one web.md's contract gives.
 */

jest.setTimeout(120_000);

const artifacts = path.resolve(__dirname, '../../../test/artifacts');

let h: Harness;
let world: BrowserWorld;
let pdfPath: string;
let tenant: SeededTenant;

beforeAll(async () => {
  h = createHarness();
  tenant = await seedTenant(h, 'PREV');
  const process = await createProcess(h, {
    tenantId: tenant.tenantId,
    organizationId: tenant.rootOrganizationId,
    code: 'QT-PREV',
    steps: [{ stepCode: 'S1', kind: 'internal', defaultUserId: tenant.adminUserId }],
  });
  const dossier = await createDossier(h, process, {
    files: [{ title: 'Hợp đồng 3 trang', content: await classicPdf(3) }],
  });
  const [file] = await dossierFiles(h.deps.db, dossier.id);
  const url = new URL(presignFileUrl(h.deps, file!.uuid));
  recordIssuedSecret(url.searchParams.get('signature')!, 'presigned URL signature');
  pdfPath = `${url.pathname}${url.search}`;
  world = await openBrowserWorld(h);
});
afterAll(async () => {
  await world?.close();
  await h?.close();
});
afterEach(() => expect(world.takeErrors()).toEqual([]));

/** A page of the app showing one preview of `source`, as a page's markup would hold it. */
async function pageWithPreview(source: string, locale: 'vi' | 'en' = 'vi') {
  const context = await world.newContext({ locale });
  const page = await world.newPage(context);
  const scripts: string[] = [];
  /** Bytes on the wire (compressed as served) of each script, by path. */
  const transferred = new Map<string, number>();
  const encodings = new Set<string>();
  page.on('requestfinished', async (request) => {
    const pathname = new URL(request.url()).pathname;
    if (!/\.m?js$/.test(pathname)) return;
    scripts.push(pathname);
    // Content-Length of the answer: what was sent, compressed as the browser asked (the worker's
    // request has no size of its own in the DevTools protocol).
    const headers = (await request.response())?.headers() ?? {};
    transferred.set(pathname, Number(headers['content-length'] ?? Number.NaN));
    encodings.add(headers['content-encoding'] ?? 'identity');
  });
  await page.goto(`${world.origin}/app/dang-nhap?lang=${locale}`);
  // An expression, not a function: the tests compile without the DOM's types.
  await page.evaluate(`(() => {
    const root = document.createElement('div');
    root.className = 'pdf-preview';
    root.dataset.pdfSrc = ${JSON.stringify(source)};
    root.dataset.pdfTitle = 'Hợp đồng 3 trang';
    const link = document.createElement('a');
    link.href = ${JSON.stringify(source)};
    link.textContent = 'Tải xuống';
    root.append(link);
    document.querySelector('main').append(root);
    const tag = document.createElement('script');
    tag.src = ${JSON.stringify(assetUrl('preview.js'))};
    document.head.append(tag);
  })()`);
  return { context, page, scripts, transferred, encodings };
}

/** What the test reads of a canvas (the tests compile without the DOM's types). */
interface CanvasLike {
  width: number;
  height: number;
  getContext(kind: '2d'): {
    getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> };
  } | null;
}

/**
 * Waits until the canvas of page `n` holds a pixel that is not white: something was drawn.
 * Polled from here: the page's CSP refuses the string evaluation of `waitForFunction`.
 */
async function waitForDrawing(page: Page, n: number): Promise<void> {
  const canvas = page.locator('.pdf-preview canvas').nth(n - 1);
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const inked = await canvas
      .evaluate((node: CanvasLike) => {
        if (node.width === 0) return false;
        const data = node.getContext('2d')?.getImageData(0, 0, node.width, node.height).data;
        for (let i = 0; data && i < data.length; i += 4) {
          if (data[i]! < 200 && data[i + 3]! > 0) return true;
        }
        return false;
      })
      .catch(() => false);
    if (inked) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`page ${n} of the preview was not drawn within 30 s`);
}

describe('the PDF preview', () => {
  it('draws the pages of a dossier file with pdf.js under the strict CSP, without console error', async () => {
    const { context, page, scripts, transferred, encodings } = await pageWithPreview(pdfPath);
    await waitForDrawing(page, 1);
    const csp = await page.evaluate(
      `fetch(location.href).then((r) => r.headers.get('content-security-policy'))`,
    );
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-eval');
    // Three pages, one canvas each; the toolbar says so.
    expect(await page.locator('.pdf-preview canvas').count()).toBe(3);
    expect(await page.locator('.pdf-page-count').textContent()).toBe('/ 3');
    expect(await page.locator('.pdf-preview canvas').first().getAttribute('aria-label')).toBe(
      'Trang 1 trên 3 của tài liệu Hợp đồng 3 trang',
    );
    // The pdf.js module and worker come from this server, nowhere else.
    expect(scripts).toEqual(
      expect.arrayContaining([
        '/app/assets/pdfjs/pdf.min.mjs',
        '/app/assets/pdfjs/pdf.worker.min.mjs',
      ]),
    );
    await page.screenshot({ path: path.join(artifacts, 'pages', 'preview-vi-1280.png') });
    // The budget: no page over 200 KB of script on the main thread, as transferred (brotli: the
    // browser asks for it, and the build wrote it).
    // The worker runs on its own thread, fetched only when a page shows a PDF (docs/decisions.md).
    const worker = '/app/assets/pdfjs/pdf.worker.min.mjs';
    const mainThread = [...transferred].filter(([name]) => name !== worker);
    const mainBytes = mainThread.reduce((sum, [, bytes]) => sum + bytes, 0);
    fs.mkdirSync(artifacts, { recursive: true });
    fs.writeFileSync(
      path.join(artifacts, 'preview-script-sizes.json'),
      `${JSON.stringify({ encodings: [...encodings], scripts: Object.fromEntries(transferred), mainBytes }, null, 1)}\n`,
    );
    expect([...encodings]).toEqual(['br']);
    expect(mainBytes).toBeGreaterThan(100_000);
    expect(mainBytes).toBeLessThanOrEqual(200 * 1024);
    expect(transferred.get(worker)).toBeLessThan(400 * 1024);

    // Page navigation by the keyboard: Tab to "next page", Enter, the last page gets drawn.
    await page.locator('.pdf-next').focus();
    await page.keyboard.press('Enter');
    await page.keyboard.press('Enter');
    await waitForDrawing(page, 3);
    expect(await page.locator('.pdf-page-number').inputValue()).toBe('3');
    // Zoom in, then back to the frame's width.
    const fitLabel = await page.locator('.pdf-zoom-level').textContent();
    await page.locator('.pdf-zoom-in').click();
    expect(await page.locator('.pdf-zoom-level').textContent()).not.toBe(fitLabel);
    await page.locator('.pdf-fit').click();
    expect(await page.locator('.pdf-zoom-level').textContent()).toBe(fitLabel);
    await context.close();
  });

  it('keeps the download link and says the file cannot be shown when pdf.js cannot read it', async () => {
    const { context, page } = await pageWithPreview('/app/assets/styles.css', 'en');
    await page.locator('.pdf-preview-failed').waitFor({ timeout: 30_000 });
    expect(await page.locator('.pdf-preview .pdf-status').textContent()).toBe(
      'The document cannot be shown here. You can still download the file to read it.',
    );
    expect(await page.locator('.pdf-preview a').getAttribute('href')).toBe(
      '/app/assets/styles.css',
    );
    await context.close();
  });

  it('draws Vietnamese text of an embedded font without CMaps, and asks for nothing it lacks', async () => {
    const doc = await PDFDocument.create();
    doc.registerFontkit(fontkit);
    const font = await doc.embedFont(
      fs.readFileSync(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf')),
      { subset: true },
    );
    doc.addPage([595, 842]).drawText('Hợp đồng tín dụng: Nguyễn Văn Ánh, Trần Thị Bình', {
      x: 50,
      y: 780,
      size: 16,
      font,
    });
    const process = await createProcess(h, {
      tenantId: tenant.tenantId,
      organizationId: tenant.rootOrganizationId,
      code: 'QT-PREV-VI',
      steps: [{ stepCode: 'S1', kind: 'internal', defaultUserId: tenant.adminUserId }],
    });
    const dossier = await createDossier(h, process, {
      files: [{ title: 'Tiếng Việt', content: Buffer.from(await doc.save()) }],
    });
    const [file] = await dossierFiles(h.deps.db, dossier.id);
    const url = new URL(presignFileUrl(h.deps, file!.uuid));
    recordIssuedSecret(url.searchParams.get('signature')!, 'presigned URL signature');
    const { context, page } = await pageWithPreview(`${url.pathname}${url.search}`);
    const said: string[] = [];
    page.on('console', (message) => said.push(message.text()));
    await waitForDrawing(page, 1);
    // pdf.js says so when a file needs CMaps or font data it was not given.
    expect(said.filter((text) => /cMapUrl|standardFontDataUrl|CMap/i.test(text))).toEqual([]);
    await context.close();
  });
});
