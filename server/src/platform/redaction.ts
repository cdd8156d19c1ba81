/**
 * Credentials that travel in URLs, kept out of every log line. A URL can carry a credential in
 * two places, and both are known here, in one place:
 *
 * - its path: the signing page's links, `/ky-so/phien/<session link token>` and
 *   `/ky-so/<invitation token>` (server/src/signingPage/routes.ts, under APP_URL);
 * - its query or fragment: a parameter whose name says credential (`token`, `at`, `signature`,
 *   `sig`, `otp`, `code`, `key`, `ticket`, `password`, `secret`, `credential`, `auth`, and any
 *   name containing token, signature, secret, password, credential, apikey or ticket: the
 *   presigned file URL's `signature`, a partner's webhook URL with `?token=`, an SMS gateway URL
 *   with `?apikey=`).
 *
 * One function, `redactCredentials`, rewrites a URL, a path with its query, or any text quoting
 * URLs (an error message, a stack), and `Bearer`/`Basic` values too. Whoever logs a URL passes it
 * through it (the request log's path and query), and the logger runs it over every line it
 * writes (platform/logger.ts), so a field nobody thought of is covered as well.
 */

const redactedMark = '[redacted]';

const exactSecretNames = new Set([
  'at',
  'sig',
  'code',
  'otp',
  'key',
  'pin',
  'jwt',
  'auth',
  'pass',
  'pwd',
  'ticket',
  'secret',
]);
const secretNameParts = [
  'token',
  'signature',
  'secret',
  'password',
  'passwd',
  'credential',
  'apikey',
];

/** Whether a query parameter named `name` carries a credential (case and `-_.[]` ignored). */
function isSecretParameter(name: string): boolean {
  let decoded = name;
  try {
    decoded = decodeURIComponent(name);
  } catch {}
  const plain = decoded.toLowerCase().replace(/[-_.[\]]/g, '');
  return exactSecretNames.has(plain) || secretNameParts.some((part) => plain.includes(part));
}

/** Characters that end a path segment or a parameter value inside a URL, a JSON string or text. */
const valueEnd = `/?#&;\\s"'<>\\\\`;

/** The session link's token (any length: a mistyped one is redacted as well; not `:token`). */
const sessionLinkToken = new RegExp(`(/ky-so/phien/)(?!:)[^${valueEnd}]+`, 'gi');
/** The invitation token: 43 base64url characters; 16 and more are taken as one. */
const invitationToken = /(\/ky-so\/)(?!phien(?![A-Za-z0-9_%-]))[A-Za-z0-9_%-]{16,}/gi;
/** `?name=value`, `&name=value`, `#name=value`, `;name=value`. */
const parameter = new RegExp(`([?&#;])([^=${valueEnd}]{1,64})=([^${valueEnd}]*)`, 'g');
/** An HTTP authorization value quoted in a message. */
const authorization = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g;

/**
 * `text` (a URL, a path with its query, or a message quoting URLs) with every credential of a
 * URL or authorization value in it replaced by [redacted]; everything else as it was.
 */
export function redactCredentials(text: string): string {
  return text
    .replace(sessionLinkToken, `$1${redactedMark}`)
    .replace(invitationToken, `$1${redactedMark}`)
    .replace(parameter, (whole, lead: string, name: string, value: string) =>
      value !== '' && isSecretParameter(name) ? `${lead}${name}=${redactedMark}` : whole,
    )
    .replace(authorization, `$1 ${redactedMark}`);
}
