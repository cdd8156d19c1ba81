import zlib from 'node:zlib';
import { currentPdfLimits, PdfBudget } from './budget';
import { pdfErrors } from './errors';
import { isName, PdfDict, type PdfValue } from './objects';
import { pngRowLayout, unfilterPngRows } from './pngRows';

/**
 * Decodes a stream's bytes: FlateDecode (with PNG predictors) or no filter, nothing else. Each
 * step may produce only what the budget has room for: a decompression bomb stops there.
 */
export function decodeStream(
  dict: PdfDict,
  raw: Buffer,
  resolve: (value: PdfValue | undefined) => PdfValue | undefined,
  limit: { budget: PdfBudget; structural: boolean } = {
    budget: new PdfBudget(currentPdfLimits()),
    structural: false,
  },
): Buffer {
  const { budget, structural } = limit;
  const filter = resolve(dict.get('Filter'));
  const filters = Array.isArray(filter)
    ? filter
    : filter === undefined || filter === null
      ? []
      : [filter];
  const parms = resolve(dict.get('DecodeParms'));
  let data = raw;
  filters.forEach((f, i) => {
    if (!isName(f, 'FlateDecode')) {
      throw pdfErrors.unreadable(`unsupported filter in a structural stream`);
    }
    const room = budget.inflateRoom(structural);
    try {
      data = zlib.inflateSync(data, {
        finishFlush: zlib.constants.Z_SYNC_FLUSH,
        maxOutputLength: Math.max(1, room),
        chunkSize: 64 * 1024,
      });
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') {
        throw budget.inflateExceeded(structural);
      }
      throw pdfErrors.unreadable('a compressed stream is corrupt');
    }
    if (data.length > room) throw budget.inflateExceeded(structural);
    budget.inflatedBytes(data.length);
    const p = Array.isArray(parms) ? resolve(parms[i]) : parms;
    if (p instanceof PdfDict) {
      const predictor = p.get('Predictor');
      const num = (key: string, fallback: number) => {
        const v = p.get(key);
        return typeof v === 'number' ? v : fallback;
      };
      if (typeof predictor === 'number' && predictor >= 10) {
        data = pngUnpredict(data, num('Columns', 1), num('Colors', 1), num('BitsPerComponent', 8));
      } else if (typeof predictor === 'number' && predictor > 1) {
        throw pdfErrors.unreadable(`unsupported predictor ${predictor}`);
      }
    }
  });
  return data;
}

/** `/Predictor` 10 to 15: the data is PNG-filtered rows of `columns` pixels; a partial last row is dropped. */
function pngUnpredict(
  data: Buffer,
  columns: number,
  colors: number,
  bitsPerComponent: number,
): Buffer {
  const layout = pngRowLayout(columns, colors * bitsPerComponent);
  const rows = Math.floor(data.length / (layout.rowBytes + 1));
  return unfilterPngRows(data, rows, layout, (filter) =>
    pdfErrors.unreadable(`unknown PNG predictor ${filter}`),
  );
}
