/**
 * Canonical JSON: the one serialization of webhook bodies (the HMAC is over exactly these bytes).
 *
 * - compact: no whitespace, no trailing newline;
 * - object keys sorted by Unicode code point, at every depth; arrays keep their order;
 * - strings and numbers are written as `JSON.stringify` writes them: only `"`, `\` and control
 *   characters are escaped, so `&`, `<`, `>` and non-ASCII text (Vietnamese) stay literal;
 * - `undefined`, function and symbol properties are dropped and `toJSON()` is honoured, as
 *   `JSON.stringify` does; in arrays `undefined` becomes `null`, as there.
 *
 * Unlike `JSON.stringify` it refuses what would silently change the data: non-finite numbers
 * (NaN, Infinity would become `null`), bigints, functions or symbols in arrays, cycles, and
 * objects other than plain objects and arrays without a `toJSON` (a Map would become `{}`).
 *
 * The sort differs from RFC 8785 (which compares UTF-16 code units) only for keys mixing
 * characters above U+FFFF with characters in U+E000..U+FFFF.
 */
export class CanonicalJsonError extends TypeError {}

/** Compares two strings by Unicode code point (not by UTF-16 code unit as `<` does). */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const left = a.codePointAt(i)!;
    const right = b.codePointAt(i)!;
    if (left !== right) return left - right;
    if (left > 0xffff) i++; // both sides hold the same surrogate pair: skip its second half
  }
  return a.length - b.length;
}

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function hasToJson(value: object): value is { toJSON(key: string): unknown } {
  return typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

function write(value: unknown, key: string, path: string, open: Set<object>): string | undefined {
  if (value !== null && typeof value === 'object' && hasToJson(value)) {
    value = value.toJSON(key);
  }
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) {
        throw new CanonicalJsonError(`${path}: ${value} is not a finite number`);
      }
      return JSON.stringify(value);
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    case 'bigint':
      throw new CanonicalJsonError(`${path}: bigint has no JSON form`);
  }
  if (value === null) return 'null';
  const object = value as object;
  if (open.has(object)) throw new CanonicalJsonError(`${path}: circular reference`);
  open.add(object);
  let text: string;
  if (Array.isArray(object)) {
    const items = object.map((item, index) => {
      const itemPath = `${path}[${index}]`;
      if (typeof item === 'function' || typeof item === 'symbol') {
        throw new CanonicalJsonError(`${itemPath}: ${typeof item} has no JSON form`);
      }
      return write(item, String(index), itemPath, open) ?? 'null';
    });
    text = `[${items.join(',')}]`;
  } else if (isPlainObject(object)) {
    const record = object as Record<string, unknown>;
    const members: string[] = [];
    for (const name of Object.keys(record).sort(compareCodePoints)) {
      const member = write(record[name], name, `${path}.${name}`, open);
      if (member !== undefined) members.push(`${JSON.stringify(name)}:${member}`);
    }
    text = `{${members.join(',')}}`;
  } else {
    const kind = object.constructor?.name ?? 'object';
    throw new CanonicalJsonError(`${path}: ${kind} is not a plain object (give it a toJSON)`);
  }
  open.delete(object);
  return text;
}

/** Serializes `value` canonically; throws `CanonicalJsonError` for values JSON cannot carry. */
export function canonicalJson(value: unknown): string {
  const text = write(value, '', '$', new Set());
  if (text === undefined) throw new CanonicalJsonError(`$: ${typeof value} has no JSON form`);
  return text;
}

/** The canonical JSON of `value` as UTF-8 bytes: what is stored, signed and sent. */
export function canonicalJsonBytes(value: unknown): Buffer {
  return Buffer.from(canonicalJson(value), 'utf8');
}
