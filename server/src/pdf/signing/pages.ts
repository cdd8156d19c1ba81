import { PdfReader } from './document';
import { pdfErrors } from './errors';
import { isName, type PdfDict, PdfRef } from './objects';

/** A page's number (1-based), how many pages the file has, and its media box in points. */
export interface PageBox {
  page: number;
  pageCount: number;
  /** `[x1 y1 x2 y2]` of the MediaBox (A4 when the file names none). */
  mediaBox: [number, number, number, number];
}

const a4: PageBox['mediaBox'] = [0, 0, 595, 842];

/** The reference of page `index` (0-based), descending the page tree by `/Count`. */
export function pageRef(reader: PdfReader, index: number): { ref: PdfRef; count: number } {
  const pagesRef = reader.catalog().get('Pages');
  const root = reader.resolveDict(pagesRef);
  if (!root || !(pagesRef instanceof PdfRef)) throw pdfErrors.unreadable('no page tree');
  const total = reader.resolveValue(root.get('Count'));
  const count = typeof total === 'number' ? total : 0;
  if (index < 0 || index >= count) throw pdfErrors.pageNotFound(index + 1, count);
  let node = root;
  let remaining = index;
  for (let depth = 0; depth < 64; depth++) {
    const kids = reader.resolveValue(node.get('Kids'));
    if (!Array.isArray(kids)) break;
    let descended = false;
    for (const kid of kids) {
      const kidDict = reader.resolveDict(kid);
      if (!kidDict || !(kid instanceof PdfRef)) continue;
      if (isName(kidDict.get('Type'), 'Pages')) {
        const kidCount = reader.resolveValue(kidDict.get('Count'));
        const n = typeof kidCount === 'number' ? kidCount : 0;
        if (remaining < n) {
          node = kidDict;
          descended = true;
          break;
        }
        remaining -= n;
      } else {
        if (remaining === 0) return { ref: kid, count };
        remaining--;
      }
    }
    if (!descended) break;
  }
  throw pdfErrors.unreadable(`page ${index + 1} not found in the page tree`);
}

/** MediaBox is inheritable: the page's own, else the nearest ancestor's. */
function mediaBoxOf(reader: PdfReader, page: PdfDict): PageBox['mediaBox'] {
  let node: PdfDict | undefined = page;
  for (let depth = 0; node && depth < 64; depth++) {
    const box = reader.resolveValue(node.get('MediaBox'));
    if (Array.isArray(box) && box.length === 4) {
      const numbers = box.map((value) => reader.resolveValue(value));
      if (numbers.every((value): value is number => typeof value === 'number')) {
        const [x1, y1, x2, y2] = numbers as [number, number, number, number];
        return [Math.min(x1, x2), Math.min(y1, y2), Math.max(x1, x2), Math.max(y1, y2)];
      }
    }
    const parent = reader.resolveDict(node.get('Parent'));
    node = parent && isName(parent.get('Type'), 'Pages') ? parent : undefined;
  }
  return a4;
}

/** The box of page `page` (1-based), or of the last page when `page` is absent. */
export function pageBox(path: string, page?: number): PageBox {
  return PdfReader.read(path, (reader) => {
    const { count } = pageRef(reader, 0);
    const wanted = page ?? count;
    const { ref } = pageRef(reader, wanted - 1);
    const dict = reader.resolveDict(ref);
    return { page: wanted, pageCount: count, mediaBox: dict ? mediaBoxOf(reader, dict) : a4 };
  });
}
