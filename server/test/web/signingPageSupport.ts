import fs from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { recordIssuedSecret } from '../../../test/support/runLog';
import { repoRoot } from '../admin/runCli';
import { pdfsig, pdfsigSignatures } from '../signing/pdf/corpus';
import type { BrowserWorld } from '../support/browser';

/**
 * What the signing page's browser tests share: contexts in a language and at a width,
 * screenshots under test/artifacts/ (not committed), drawing on the signature pad with a mouse
 * or a finger, the signed PDF downloaded from the page and checked by pdfsig, and where a drawn
 * signature and its caption landed in the PDF.
 */

const artifacts = path.join(repoRoot, 'test', 'artifacts', 'signing-page');

/** A context in `locale` (its language cookie set) at `width`; a phone's touch when asked. */
export async function signingContext(
  world: BrowserWorld,
  options: { locale?: 'vi' | 'en'; width?: number; touch?: boolean } = {},
): Promise<BrowserContext> {
  const locale = options.locale ?? 'vi';
  const context = await world.newContext({
    width: options.width ?? (options.touch ? 390 : 1280),
    locale,
    touch: options.touch ?? false,
  });
  await context.addCookies([{ name: 'esign_lang', value: locale, url: world.origin }]);
  return context;
}

/** The text of the first element `selector` finds, its white space folded. */
export async function text(page: Page, selector: string): Promise<string> {
  return ((await page.locator(selector).first().textContent()) ?? '').replace(/\s+/g, ' ').trim();
}

/** A whole-page screenshot, `test/artifacts/signing-page/<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true });
}

/**
 * The signature pad's box once the page around it holds still: the PDF preview above it has
 * taken its final height (shown, or failed) and the box is the same on three looks in a row. A
 * stroke aimed at a box that then moves lands elsewhere on the page (on a loaded machine the
 * preview may finish while the stroke is drawn).
 */
async function settledPad(
  page: Page,
): Promise<{ x: number; y: number; width: number; height: number }> {
  if ((await page.locator('.pdf-preview-ready').count()) > 0) {
    await page.locator('.pdf-preview-shown, .pdf-preview-failed').first().waitFor();
  }
  const pad = page.locator('#signature-pad');
  await pad.waitFor({ state: 'visible' });
  await pad.scrollIntoViewIfNeeded();
  let last = '';
  let same = 0;
  for (let look = 0; look < 100; look++) {
    const box = await pad.boundingBox();
    const seen = JSON.stringify(box);
    same = box && box.width > 0 && box.height > 0 && seen === last ? same + 1 : 0;
    if (box && same >= 2) return box;
    last = seen;
    await page.waitForTimeout(50);
  }
  throw new Error('the signature pad kept moving');
}

/** A stroke across the pad with the mouse, as a signer writes a name. */
export async function drawWithMouse(page: Page): Promise<void> {
  const box = await settledPad(page);
  const at = (x: number, y: number) => [box.x + x * box.width, box.y + y * box.height] as const;
  await page.mouse.move(...at(0.1, 0.7));
  await page.mouse.down();
  for (const [x, y] of [
    [0.2, 0.25],
    [0.3, 0.75],
    [0.45, 0.3],
    [0.6, 0.7],
    [0.85, 0.35],
  ] as const) {
    await page.mouse.move(...at(x, y), { steps: 8 });
  }
  await page.mouse.up();
}

/**
 * A stroke with a finger: touch events through the DevTools protocol, which Chromium turns into
 * pointer events of type `touch`, as a phone's screen does.
 */
export async function drawWithFinger(page: Page): Promise<void> {
  const box = await settledPad(page);
  const cdp = await page.context().newCDPSession(page);
  const point = (x: number, y: number) => ({
    x: box.x + x * box.width,
    y: box.y + y * box.height,
    id: 1,
  });
  await cdp.send('Input.dispatchTouchEvent', {
    type: 'touchStart',
    touchPoints: [point(0.1, 0.6)],
  });
  const path: [number, number][] = [];
  for (let i = 1; i <= 24; i++) {
    const x = 0.1 + (0.8 * i) / 24;
    path.push([x, 0.5 + 0.25 * Math.sin(i / 2)]);
  }
  for (const [x, y] of path) {
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [point(x, y)] });
  }
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await cdp.detach();
}

/** Clicks the link and saves what it downloads into `dir`; answers the file's path. */
export async function download(page: Page, selector: string, dir: string): Promise<string> {
  const [file] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  const target = path.join(dir, file.suggestedFilename().replace(/[^\w.() -]/g, '_'));
  await file.saveAs(target);
  return target;
}

/**
 * pdfsig's verdict on each signature of a file: whether it is valid, and whether it is the
 * archive's document timestamp (which poppler lists but does not validate).
 */
export function pdfsigVerdicts(file: string) {
  return pdfsigSignatures(pdfsig(file)).map((verdict) => ({
    ...verdict,
    documentTimestamp: /Signature Field Name: DocumentTimestamp/.test(verdict.text),
  }));
}

/**
 * Every signature pdfsig validates is valid, there is at least one, and the last signature or
 * timestamp covers the whole file; answers how many signatures (timestamps left out).
 */
export function expectPdfsigValid(file: string): number {
  const verdicts = pdfsigVerdicts(file);
  const signatures = verdicts.filter((verdict) => !verdict.documentTimestamp);
  const whole = verdicts.at(-1)?.total === true;
  if (signatures.length === 0 || !whole || !signatures.every((verdict) => verdict.valid)) {
    throw new Error(`pdfsig does not find every signature valid:\n${pdfsig(file)}`);
  }
  return signatures.length;
}

/** Notes a page credential the test read from a page, so that the run's log scan looks for it. */
export function noteCredential(value: string | null | undefined): void {
  if (value) recordIssuedSecret(value, 'signing page credential');
}
