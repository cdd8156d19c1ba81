import { isLocale, locales, messagesOf } from '../src/messages';

/**
 * The catalogues are complete: the English files are typed by the Vietnamese ones (a missing or
 * extra key in an area fails to compile); this walks both whole, so an area missing from one
 * language's index, an empty text, or a text that takes its values differently shows here too.
 */

type Entry = { path: string; value: unknown };

function entries(value: unknown, path = ''): Entry[] {
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).flatMap(([key, inner]) =>
      entries(inner, path === '' ? key : `${path}.${key}`),
    );
  }
  return [{ path, value }];
}

const vi = new Map(entries(messagesOf('vi')).map((entry) => [entry.path, entry.value]));
const en = new Map(entries(messagesOf('en')).map((entry) => [entry.path, entry.value]));

/** A text's words with every value filled in by a placeholder. */
function filled(value: unknown): unknown {
  if (typeof value !== 'function') return value;
  const args = Array.from({ length: value.length }, (_, i) => `«${i}»`);
  return value(...args);
}

describe('message catalogues', () => {
  test('two languages, Vietnamese first', () => {
    expect(locales).toEqual(['vi', 'en']);
    expect(isLocale('en')).toBe(true);
    expect(isLocale('fr')).toBe(false);
    expect(isLocale(undefined)).toBe(false);
  });

  test('every Vietnamese key has an English text and the other way round', () => {
    expect(vi.size).toBeGreaterThan(500);
    expect([...en.keys()].sort()).toEqual([...vi.keys()].sort());
  });

  test('every text is a non-empty string, or a function of its values giving one', () => {
    for (const [path, value] of [...vi, ...en]) {
      expect([path, typeof value]).toEqual([path, expect.stringMatching(/^(string|function)$/)]);
      const text = filled(value);
      expect([path, typeof text]).toEqual([path, 'string']);
      expect([path, (text as string).trim().length > 0]).toEqual([path, true]);
    }
  });

  test('a text with values takes the same values in both languages, and shows each', () => {
    for (const [path, value] of vi) {
      const other = en.get(path);
      expect([path, typeof other]).toEqual([path, typeof value]);
      if (typeof value !== 'function' || typeof other !== 'function') continue;
      expect([path, other.length]).toEqual([path, value.length]);
    }
  });
});
