import { execFileSync } from 'node:child_process';

/** An axis-aligned rectangle: [x0, y0, x1, y1]. */
export type Box = [number, number, number, number];

export const meet = (a: Box, b: Box) => a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];

/**
 * Where a visible signature's drawn picture and its caption landed, rendered by pdftoppm at
 * 144 dpi: the bounding boxes (in the box's pixels) of the stroke's blue and of the text's
 * black inside `rect` (points from the page's bottom-left). Only pixels that are white on the
 * same page of `unsigned` (the file before the signature) count, so the page's own drawing is
 * left out.
 */
export function inkAndCaption(
  signed: string,
  unsigned: string,
  rect: Box,
  where: { page?: number; pageHeight?: number } = {},
): { ink: Box | null; caption: Box | null } {
  const scale = 2;
  const page = String(where.page ?? 1);
  const width = rect[2] - rect[0];
  const height = rect[3] - rect[1];
  const render = (file: string) => {
    const ppm = execFileSync(
      'pdftoppm',
      [
        ...['-r', '144', '-f', page, '-l', page],
        ...['-x', String(Math.round(rect[0] * scale))],
        ...['-y', String(Math.round(((where.pageHeight ?? 842) - rect[3]) * scale))],
        ...['-W', String(Math.round(width * scale)), '-H', String(Math.round(height * scale))],
        file,
      ],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    const header = /^P6\s+(\d+)\s+(\d+)\s+255\s/.exec(ppm.toString('latin1', 0, 40))!;
    return {
      columns: Number(header[1]),
      rows: Number(header[2]),
      pixels: ppm.subarray(header[0].length),
    };
  };
  const after = render(signed);
  const before = render(unsigned);
  const bounds = (test: (r: number, g: number, b: number) => boolean): Box | null => {
    let found: Box | null = null;
    for (let row = 0; row < after.rows; row++) {
      for (let column = 0; column < after.columns; column++) {
        const at = (row * after.columns + column) * 3;
        if (before.pixels.subarray(at, at + 3).some((value) => value !== 255)) continue;
        const [r, g, b] = after.pixels.subarray(at, at + 3);
        if (!test(r!, g!, b!)) continue;
        found = found
          ? [
              Math.min(found[0], column),
              Math.min(found[1], row),
              Math.max(found[2], column + 1),
              Math.max(found[3], row + 1),
            ]
          : [column, row, column + 1, row + 1];
      }
    }
    return found;
  };
  return {
    ink: bounds((r, g, b) => b > 100 && b - r > 60 && b - g > 40),
    caption: bounds((r, g, b) => r < 110 && g < 110 && b < 110 && Math.abs(b - r) < 40),
  };
}
