import crypto from 'node:crypto';
import { randomToken } from '../platform/secrets';

/**
 * Webhook signing on one screen. A secret is `whsec_` + 43 base64url characters; the HMAC key is
 * the secret string exactly as shown (prefix included), as UTF-8. The signature of a body is
 * `sha256=<lower-case hex of HMAC-SHA256(secret, raw body bytes)>`.
 *
 * `X-Webhook-Signature` carries one signature per valid secret, separated by a space: one
 * outside a rotation, two (new secret first, then the previous one) during a rotation's grace
 * period. A receiver accepts the request when any of them matches its own secret.
 */

export function newWebhookSecret(): string {
  return `whsec_${randomToken(32)}`;
}

/** `sha256=<hex>` of the raw body with one secret. */
export function signBody(secret: string, body: Uint8Array): string {
  return `sha256=${crypto.createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** The header value: the signatures of the body with every valid secret, newest first. */
export function signatureHeader(secrets: readonly string[], body: Uint8Array): string {
  if (secrets.length === 0) throw new TypeError('a webhook needs at least one signing secret');
  return secrets.map((secret) => signBody(secret, body)).join(' ');
}
