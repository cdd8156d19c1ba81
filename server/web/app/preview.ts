/**
 * The PDF preview: every `<div class="pdf-preview" data-pdf-src="…" data-pdf-title="…">` of the
 * page becomes a viewer (pdf.js, served by us): the pages as canvases, drawn only when they come
 * near the visible part, with page navigation and zoom; the element's own content (a download
 * link) stays below it, and is all there is when pdf.js cannot show the file.
 *
 * pdf.js is not in this bundle: its module is imported only when the page has a preview, and its
 * worker started once for all of them. Both run under the page's strict CSP (`script-src 'self'`,
 * `worker-src 'self'`, no inline style: sizes are set through the CSSOM, which CSP allows).
 */

import { preview as en } from '@esign/shared/messages/en/preview';
import { preview as vi } from '@esign/shared/messages/vi/preview';
import type * as PdfJs from 'pdfjs-dist';
import type { PDFDocumentProxy, PDFPageProxy, PDFWorker, RenderTask } from 'pdfjs-dist';

/** The content hashes of the copied files (scripts/build.mjs), to ask for each version for good. */
declare const APP_ASSET_VERSIONS: Record<string, string>;

const texts = document.body.dataset.locale === 'en' ? en : vi;
const scriptUrl = (document.currentScript as HTMLScriptElement | null)?.src ?? location.href;

/** The URL of one of the app's browser files, beside this script. */
function assetUrl(name: string): string {
  const url = new URL(name, scriptUrl);
  const version = APP_ASSET_VERSIONS[name];
  if (version) url.searchParams.set('v', version);
  return url.href;
}

let library: Promise<{ pdfjs: typeof PdfJs; worker: PDFWorker }> | undefined;

/** pdf.js and its one worker, loaded the first time a preview needs them. */
function loadLibrary(): Promise<{ pdfjs: typeof PdfJs; worker: PDFWorker }> {
  library ??= (import(assetUrl('pdfjs/pdf.min.mjs')) as Promise<typeof PdfJs>).then((pdfjs) => {
    pdfjs.GlobalWorkerOptions.workerSrc = assetUrl('pdfjs/pdf.worker.min.mjs');
    return { pdfjs, worker: new pdfjs.PDFWorker() };
  });
  return library;
}

const minScale = 0.25;
const maxScale = 4;
const zoomStep = 1.25;
/** Canvas pixels at most for one page (a huge page at a high zoom would exhaust memory). */
const maxCanvasPixels = 16_000_000;

function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function button(className: string, label: string, symbol: string): HTMLButtonElement {
  const node = element('button', `button button-secondary ${className}`);
  node.type = 'button';
  node.setAttribute('aria-label', label);
  node.title = label;
  const glyph = element('span', 'pdf-glyph', symbol);
  glyph.setAttribute('aria-hidden', 'true');
  node.append(glyph);
  return node;
}

interface PageSlot {
  number: number;
  box: HTMLDivElement;
  canvas: HTMLCanvasElement;
  /** Size at scale 1, in CSS pixels (page 1's until this page is read). */
  width: number;
  height: number;
  sized: boolean;
  /** The scale the canvas holds, or 0 when it holds nothing. */
  drawn: number;
  task: RenderTask | undefined;
}

/** One preview element turned into a viewer. */
class Preview {
  private readonly title: string;
  private readonly status: HTMLParagraphElement;
  private readonly pagesBox: HTMLDivElement;
  private readonly pageInput: HTMLInputElement;
  private readonly pageCount: HTMLSpanElement;
  private readonly zoomLabel: HTMLSpanElement;
  private readonly previousButton: HTMLButtonElement;
  private readonly nextButton: HTMLButtonElement;
  private readonly toolbar: HTMLDivElement;
  private document: PDFDocumentProxy | undefined;
  private slots: PageSlot[] = [];
  /** 'fit': the page's width fills the frame, whatever its size; else a fixed scale. */
  private zoom: 'fit' | number = 'fit';
  private scale = 1;
  private observer: IntersectionObserver | undefined;
  private visible = new Set<PageSlot>();

  constructor(private readonly root: HTMLElement) {
    this.title = root.dataset.pdfTitle ?? '';
    root.classList.add('pdf-preview-ready');
    this.toolbar = element('div', 'pdf-toolbar');
    this.toolbar.setAttribute('role', 'toolbar');
    this.toolbar.setAttribute('aria-label', texts.toolbar);
    this.toolbar.hidden = true;

    this.previousButton = button('pdf-previous', texts.previous, '‹');
    this.nextButton = button('pdf-next', texts.next, '›');
    const pageField = element('span', 'pdf-page-field');
    const inputId = `pdf-page-${Math.random().toString(36).slice(2)}`;
    const label = element('label', 'pdf-page-label', texts.page);
    label.htmlFor = inputId;
    this.pageInput = element('input', 'pdf-page-number');
    this.pageInput.id = inputId;
    this.pageInput.type = 'number';
    this.pageInput.min = '1';
    this.pageInput.inputMode = 'numeric';
    this.pageCount = element('span', 'pdf-page-count');
    pageField.append(label, this.pageInput, this.pageCount);
    const zoomOut = button('pdf-zoom-out', texts.zoomOut, '−');
    const zoomIn = button('pdf-zoom-in', texts.zoomIn, '+');
    const fit = element('button', 'button button-secondary pdf-fit', texts.fitWidth);
    fit.type = 'button';
    this.zoomLabel = element('span', 'pdf-zoom-level');
    this.zoomLabel.setAttribute('aria-live', 'polite');
    const navigation = element('div', 'pdf-tool-group');
    navigation.append(this.previousButton, pageField, this.nextButton);
    const zooming = element('div', 'pdf-tool-group');
    zooming.append(zoomOut, this.zoomLabel, zoomIn, fit);
    this.toolbar.append(navigation, zooming);

    this.status = element('p', 'pdf-status muted', texts.loading);
    this.status.setAttribute('role', 'status');
    this.pagesBox = element('div', 'pdf-pages');
    this.pagesBox.hidden = true;
    this.pagesBox.tabIndex = 0;
    this.pagesBox.setAttribute('role', 'region');
    this.pagesBox.setAttribute('aria-label', texts.region(this.title));
    root.prepend(this.toolbar, this.status, this.pagesBox);

    this.previousButton.addEventListener('click', () => this.goTo(this.currentPage() - 1));
    this.nextButton.addEventListener('click', () => this.goTo(this.currentPage() + 1));
    this.pageInput.addEventListener('change', () => this.goTo(Number(this.pageInput.value)));
    zoomOut.addEventListener('click', () => this.setZoom(this.scale / zoomStep));
    zoomIn.addEventListener('click', () => this.setZoom(this.scale * zoomStep));
    fit.addEventListener('click', () => this.setZoom('fit'));
    this.pagesBox.addEventListener('scroll', () => this.showCurrentPage(), { passive: true });
    this.pagesBox.addEventListener('keydown', (event) => this.onKey(event));
  }

  async open(): Promise<void> {
    const source = this.root.dataset.pdfSrc;
    try {
      if (!source) throw new Error('no data-pdf-src');
      const url = new URL(source, location.href);
      // Only our own files: the page's CSP would refuse another origin anyway.
      if (url.origin !== location.origin) throw new Error('the PDF is on another origin');
      const { pdfjs, worker } = await loadLibrary();
      this.document = await pdfjs.getDocument({
        url: url.href,
        worker,
        wasmUrl: assetUrl('pdfjs/wasm/').replace(/\?.*$/, ''),
        standardFontDataUrl: assetUrl('pdfjs/standard_fonts/').replace(/\?.*$/, ''),
        enableXfa: false,
      }).promise;
      const first = await this.document.getPage(1);
      const size = first.getViewport({ scale: 1 });
      this.layout(this.document.numPages, size.width, size.height);
      this.sizeSlot(this.slots[0]!, first);
      this.status.textContent = '';
      this.status.hidden = true;
      this.toolbar.hidden = false;
      this.pagesBox.hidden = false;
      this.applyScale();
      // Its final height: what lies below it (a signature pad) no longer moves.
      this.root.classList.add('pdf-preview-shown');
      new ResizeObserver(() => {
        if (this.zoom === 'fit') this.applyScale();
      }).observe(this.pagesBox);
    } catch (error) {
      this.fail(error);
    }
  }

  private fail(error: unknown): void {
    console.warn('PDF preview failed:', error);
    this.observer?.disconnect();
    this.root.classList.add('pdf-preview-failed');
    this.toolbar.hidden = true;
    this.pagesBox.hidden = true;
    this.status.hidden = false;
    this.status.className = 'pdf-status notice notice-warning';
    this.status.textContent = texts.failed;
  }

  /** One box per page, all the first page's size until each is read. */
  private layout(pages: number, width: number, height: number): void {
    this.pageInput.max = String(pages);
    this.pageCount.textContent = texts.of(pages);
    this.observer = new IntersectionObserver((entries) => this.onIntersect(entries), {
      root: this.pagesBox,
      rootMargin: '300px 0px',
    });
    for (let number = 1; number <= pages; number++) {
      const box = element('div', 'pdf-page');
      const canvas = element('canvas', 'pdf-canvas');
      canvas.setAttribute('role', 'img');
      canvas.setAttribute('aria-label', texts.pageImage(number, pages, this.title));
      box.append(canvas);
      this.pagesBox.append(box);
      const slot: PageSlot = {
        number,
        box,
        canvas,
        width,
        height,
        sized: false,
        drawn: 0,
        task: undefined,
      };
      this.slots.push(slot);
      this.observer.observe(box);
    }
  }

  private sizeSlot(slot: PageSlot, page: PDFPageProxy): void {
    const size = page.getViewport({ scale: 1 });
    slot.width = size.width;
    slot.height = size.height;
    slot.sized = true;
  }

  private setZoom(zoom: 'fit' | number): void {
    this.zoom = zoom === 'fit' ? 'fit' : Math.min(maxScale, Math.max(minScale, zoom));
    this.applyScale();
  }

  /** Resizes every box for the zoom; what is drawn at another scale is drawn again. */
  private applyScale(): void {
    const first = this.slots[0];
    if (!first) return;
    const keep = this.currentPage();
    if (this.zoom === 'fit') {
      const style = getComputedStyle(this.pagesBox);
      const room =
        this.pagesBox.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      this.scale = Math.min(maxScale, Math.max(minScale, room / first.width));
    } else {
      this.scale = this.zoom;
    }
    this.zoomLabel.textContent = texts.zoom(Math.round(this.scale * 100));
    for (const slot of this.slots) this.resize(slot);
    this.goTo(keep, false);
    for (const slot of this.visible) void this.draw(slot);
  }

  private resize(slot: PageSlot): void {
    // The CSSOM, not a style attribute: CSP allows the one and refuses the other.
    slot.box.style.width = `${Math.floor(slot.width * this.scale)}px`;
    slot.box.style.height = `${Math.floor(slot.height * this.scale)}px`;
  }

  private onIntersect(entries: IntersectionObserverEntry[]): void {
    for (const entry of entries) {
      const slot = this.slots.find((s) => s.box === entry.target);
      if (!slot) continue;
      if (entry.isIntersecting) {
        this.visible.add(slot);
        void this.draw(slot);
      } else {
        this.visible.delete(slot);
      }
    }
  }

  /** Draws a page at the current scale, unless it already is. */
  private async draw(slot: PageSlot): Promise<void> {
    const document = this.document;
    if (!document || slot.drawn === this.scale) return;
    slot.task?.cancel();
    const scale = this.scale;
    try {
      const page = await document.getPage(slot.number);
      if (!slot.sized) {
        this.sizeSlot(slot, page);
        this.resize(slot);
      }
      if (scale !== this.scale) return;
      const viewport = page.getViewport({ scale });
      const density = Math.min(
        window.devicePixelRatio || 1,
        2,
        Math.sqrt(maxCanvasPixels / (viewport.width * viewport.height)),
      );
      const canvas = slot.canvas;
      canvas.width = Math.floor(viewport.width * density);
      canvas.height = Math.floor(viewport.height * density);
      const task = page.render({
        canvas,
        viewport,
        transform: density === 1 ? undefined : [density, 0, 0, density, 0, 0],
      });
      slot.task = task;
      await task.promise;
      slot.task = undefined;
      slot.drawn = scale;
    } catch (error) {
      if (error instanceof Error && error.name === 'RenderingCancelledException') return;
      this.fail(error);
    }
  }

  /** The page whose box holds the top of the visible part. */
  private currentPage(): number {
    const top = this.pagesBox.scrollTop + this.pagesBox.clientHeight / 3;
    let current = 1;
    for (const slot of this.slots) {
      if (slot.box.offsetTop <= top) current = slot.number;
      else break;
    }
    return current;
  }

  private showCurrentPage(): void {
    const current = this.currentPage();
    if (document.activeElement !== this.pageInput) this.pageInput.value = String(current);
    this.previousButton.disabled = current <= 1;
    this.nextButton.disabled = current >= this.slots.length;
  }

  private goTo(number: number, focusPages = true): void {
    const target = Math.min(this.slots.length, Math.max(1, Math.round(number) || 1));
    const slot = this.slots[target - 1];
    if (!slot) return;
    // The boxes are placed in the scrolling frame (position: relative), below its padding.
    const padding = parseFloat(getComputedStyle(this.pagesBox).paddingTop) || 0;
    this.pagesBox.scrollTop = slot.box.offsetTop - padding;
    this.showCurrentPage();
    this.pageInput.value = String(target);
    if (focusPages && document.activeElement === this.pageInput) this.pagesBox.focus();
  }

  /** Page Up/Down and Home/End move by page inside the viewer; arrows scroll as usual. */
  private onKey(event: KeyboardEvent): void {
    const moves: Record<string, () => number> = {
      PageDown: () => this.currentPage() + 1,
      PageUp: () => this.currentPage() - 1,
      Home: () => 1,
      End: () => this.slots.length,
    };
    const move = moves[event.key];
    if (!move || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    this.goTo(move(), false);
  }
}

for (const root of document.querySelectorAll<HTMLElement>('.pdf-preview')) {
  void new Preview(root).open();
}
