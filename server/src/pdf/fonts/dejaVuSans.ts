import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import type { Font } from '@pdf-lib/fontkit';

/**
 * DejaVu Sans, the one Unicode font our generated PDFs embed (it covers Vietnamese), read from
 * the dejavu-fonts-ttf package. Everything here loads on first use: fontkit and a 700 KB font
 * cost start-up time and memory that a server signing nothing visible should not pay.
 */

type Fontkit = typeof import('@pdf-lib/fontkit');
export type DejaVuFace = 'regular' | 'bold';

const fileNames: Record<DejaVuFace, string> = {
  regular: 'DejaVuSans.ttf',
  bold: 'DejaVuSans-Bold.ttf',
};

/** Caches a promise, forgetting it when it fails so that a later call can try again. */
function once<K, T>(cache: Map<K, Promise<T>>, key: K, load: () => Promise<T>): Promise<T> {
  let pending = cache.get(key);
  if (pending === undefined) {
    pending = load();
    pending.catch(() => cache.delete(key));
    cache.set(key, pending);
  }
  return pending;
}

const fileBytes = new Map<DejaVuFace, Promise<Buffer>>();

/** The font file's bytes (read once). */
export function dejaVuSansBytes(face: DejaVuFace = 'regular'): Promise<Buffer> {
  return once(fileBytes, face, () =>
    fs.readFile(require.resolve(`dejavu-fonts-ttf/ttf/${fileNames[face]}`)),
  );
}

const fontkitModule = new Map<'fontkit', Promise<Fontkit>>();

/** @pdf-lib/fontkit, imported on first use (its UMD build is CommonJS: `default` when bundled). */
export function loadFontkit(): Promise<Fontkit> {
  return once(fontkitModule, 'fontkit', async () => {
    const loaded: Fontkit & { default?: Fontkit } = await import('@pdf-lib/fontkit');
    return loaded.default ?? loaded;
  });
}

const parsedFonts = new Map<DejaVuFace, Promise<Font>>();

/** The font parsed by fontkit (once; glyph metrics and subsetting). */
export function dejaVuSansFont(face: DejaVuFace = 'regular'): Promise<Font> {
  return once(parsedFonts, face, async () => {
    const [fontkit, bytes] = await Promise.all([loadFontkit(), dejaVuSansBytes(face)]);
    return fontkit.create(bytes);
  });
}

/**
 * A subset tag (six capitals, PDF 32000-1 §9.6.4) derived from the input, so that the same
 * input gives the same bytes.
 */
export function subsetTag(...inputs: (string | Uint8Array)[]): string {
  const digest = crypto.createHash('sha256');
  for (const input of inputs) digest.update(input);
  const bytes = digest.digest().subarray(0, 6);
  return Array.from(bytes, (byte) => String.fromCharCode(65 + (byte % 26))).join('');
}
