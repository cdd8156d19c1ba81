/**
 * Strict base64 checks (RFC 4648 section 4: standard alphabet, padded, no whitespace) without
 * Buffer, so browser pages can use them too. Strict means one spelling per byte string: the
 * unused bits before the padding must be zero, so a value cannot be altered without changing
 * the bytes it stands for.
 */
const BASE64 =
  /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?$/;

/** Whether `value` is strict, padded, standard-alphabet base64 (the empty string included). */
export function isBase64(value: string): boolean {
  return value.length % 4 === 0 && BASE64.test(value);
}

/** How many bytes a strict base64 string decodes to (the caller checks `isBase64` first). */
export function base64ByteLength(value: string): number {
  const padding = value.endsWith('==') ? 2 : value.endsWith('=') ? 1 : 0;
  return (value.length / 4) * 3 - padding;
}
