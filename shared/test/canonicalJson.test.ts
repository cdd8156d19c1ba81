import {
  CanonicalJsonError,
  canonicalJson,
  canonicalJsonBytes,
  compareCodePoints,
} from '../src/canonicalJson';

describe('canonical JSON of webhook bodies', () => {
  it('is compact with object keys sorted', () => {
    expect(
      canonicalJson({ type: 'document.completed', id: 'evt_1', data: {}, createdAt: 'x' }),
    ).toBe('{"createdAt":"x","data":{},"id":"evt_1","type":"document.completed"}');
  });

  it('sorts keys at every depth and keeps array order', () => {
    const body = {
      z: [{ b: 2, a: 1 }, 3, [{ d: null, c: true }]],
      a: { y: { k: 'v', j: false }, x: -0.5 },
    };
    expect(canonicalJson(body)).toBe(
      '{"a":{"x":-0.5,"y":{"j":false,"k":"v"}},"z":[{"a":1,"b":2},3,[{"c":true,"d":null}]]}',
    );
  });

  it('sorts upper case before lower case and shorter prefixes first (code point order)', () => {
    expect(canonicalJson({ b: 1, B: 2, ab: 3, a: 4, _: 5, '10': 6, '9': 7 })).toBe(
      '{"10":6,"9":7,"B":2,"_":5,"a":4,"ab":3,"b":1}',
    );
  });

  it('orders keys by code point, not by UTF-16 unit, above U+FFFF', () => {
    // U+1F600 is 0xD83D 0xDE00 in UTF-16, which sorts before U+FF5E by code unit.
    expect(canonicalJson({ '😀': 1, '～': 2 })).toBe('{"～":2,"😀":1}');
    expect(compareCodePoints('😀', '～')).toBeGreaterThan(0);
    expect(compareCodePoints('a😀b', 'a😀c')).toBeLessThan(0);
    expect(compareCodePoints('abc', 'abc')).toBe(0);
  });

  it('keeps Vietnamese text as UTF-8, not \\u-escaped', () => {
    const body = { signerName: 'Nguyễn Văn Ánh' };
    expect(canonicalJson(body)).toBe('{"signerName":"Nguyễn Văn Ánh"}');
    expect(canonicalJsonBytes(body)).toEqual(
      Buffer.from([
        ...Buffer.from('{"signerName":"Nguy', 'ascii'),
        0xe1,
        0xbb,
        0x85, // ễ U+1EC5
        ...Buffer.from('n V', 'ascii'),
        0xc4,
        0x83, // ă U+0103
        ...Buffer.from('n ', 'ascii'),
        0xc3,
        0x81, // Á U+00C1
        ...Buffer.from('nh"}', 'ascii'),
      ]),
    );
  });

  it('keeps & < > in presigned URLs literal', () => {
    const url = 'https://files.example.vn/f/abc?expires=1700000000&sig=a1b2&x=<y>';
    expect(canonicalJson({ url })).toBe(
      '{"url":"https://files.example.vn/f/abc?expires=1700000000&sig=a1b2&x=<y>"}',
    );
    expect(canonicalJsonBytes({ url }).includes(Buffer.from('\\u0026'))).toBe(false);
  });

  it('escapes only what JSON requires: quote, backslash and control characters', () => {
    expect(canonicalJson({ s: 'a"b\\c\n\t\u0001/\u2028' })).toBe(
      '{"s":"a\\"b\\\\c\\n\\t\\u0001/\u2028"}',
    );
  });

  it('writes numbers as JSON.stringify does', () => {
    expect(canonicalJson([0, -0, 1.5, 1e21, 1e-7, 123456789012, -3])).toBe(
      '[0,0,1.5,1e+21,1e-7,123456789012,-3]',
    );
  });

  it('drops undefined properties and writes null for undefined array entries', () => {
    expect(canonicalJson({ a: undefined, b: 1, c: [undefined, 2] })).toBe('{"b":1,"c":[null,2]}');
  });

  it('honours toJSON, so dates become ISO strings', () => {
    expect(canonicalJson({ at: new Date(Date.UTC(2025, 0, 2, 3, 4, 5)) })).toBe(
      '{"at":"2025-01-02T03:04:05.000Z"}',
    );
  });

  it('accepts objects without a prototype', () => {
    const bare = Object.assign(Object.create(null) as object, { b: 1, a: 2 });
    expect(canonicalJson(bare)).toBe('{"a":2,"b":1}');
  });

  it('returns the same bytes as the string, with no trailing newline', () => {
    const bytes = canonicalJsonBytes({ b: [1, 'ở'], a: 'x' });
    expect(Buffer.isBuffer(bytes)).toBe(true);
    expect(bytes.toString('utf8')).toBe('{"a":"x","b":[1,"ở"]}');
    expect(bytes.at(-1)).toBe(0x7d);
  });

  it.each([
    ['NaN', { n: Number.NaN }, '$.n: NaN is not a finite number'],
    [
      'Infinity',
      { list: [1, Number.POSITIVE_INFINITY] },
      '$.list[1]: Infinity is not a finite number',
    ],
    ['a bigint', { n: 1n }, '$.n: bigint has no JSON form'],
    ['a function in an array', [() => 1], '$[0]: function has no JSON form'],
    ['a Map', { m: new Map([['a', 1]]) }, '$.m: Map is not a plain object (give it a toJSON)'],
    ['undefined at the top', undefined, '$: undefined has no JSON form'],
  ])('rejects %s', (_name, value, message) => {
    expect(() => canonicalJson(value)).toThrow(CanonicalJsonError);
    expect(() => canonicalJson(value)).toThrow(message);
  });

  it('rejects circular structures but allows shared ones', () => {
    const shared = { k: 1 };
    expect(canonicalJson({ a: shared, b: [shared] })).toBe('{"a":{"k":1},"b":[{"k":1}]}');
    const loop: Record<string, unknown> = {};
    loop.self = { back: loop };
    expect(() => canonicalJson(loop)).toThrow('$.self.back: circular reference');
  });
});
