/**
 * Greedy line wrapping at spaces by real glyph widths, shared by everything that draws text in
 * a box. `widthOf` measures a string in the same unit as `maxWidth`. A word wider than the line
 * is broken between characters, combining marks staying with their letter.
 */
export function wrapText(
  text: string,
  maxWidth: number,
  widthOf: (text: string) => number,
): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(' ').filter((w) => w !== '')) {
    const candidate = current === '' ? word : `${current} ${word}`;
    if (widthOf(candidate) <= maxWidth) {
      current = candidate;
      continue;
    }
    if (current !== '') lines.push(current);
    const pieces = breakWord(word, maxWidth, widthOf);
    current = pieces.pop() ?? '';
    lines.push(...pieces);
  }
  if (current !== '') lines.push(current);
  return lines;
}

function breakWord(word: string, maxWidth: number, widthOf: (text: string) => number): string[] {
  const pieces: string[] = [];
  let piece = '';
  for (const character of word.match(/\P{M}\p{M}*|\p{M}+/gu) ?? []) {
    if (piece !== '' && widthOf(piece + character) > maxWidth) {
      pieces.push(piece);
      piece = '';
    }
    piece += character;
  }
  if (piece !== '') pieces.push(piece);
  return pieces;
}
