import crypto from 'node:crypto';
import type { AppDeps } from '../context';
import { DomainError } from '../errors/domainError';

/**
 * Presigned file URLs: `{PUBLIC_URL}/api/files/{fileUuid}?expires=<unix seconds>&signature=<hex>`,
 * where the signature is HMAC-SHA256 (the service's URL-signing key) over the file uuid and the
 * expiry. Whoever holds the URL may download the newest version of the file until it expires;
 * nothing else is needed. `downloadUrl` (the integration endpoint) never expires but needs a
 * credential.
 */

/** Spec "Limits": presigned file URL in dossier responses, 24 hours by default. */
export const presignedUrlLifetimeSeconds = 24 * 60 * 60;

export const presignedUrlCodes = {
  invalid: 'PRESIGNED_URL_INVALID',
  expired: 'PRESIGNED_URL_EXPIRED',
} as const;

type SigningDeps = Pick<AppDeps, 'config' | 'clock' | 'secrets'>;

/** Path of the presigned route (mounted under /api). */
export function presignedPath(fileUuid: string): string {
  return `/api/files/${fileUuid}`;
}

/** The spec's `downloadUrl`: relative path of endpoint 5; it never expires. */
export function downloadPath(fileUuid: string): string {
  return `/api/integration/files/${fileUuid}/download`;
}

function signatureOf(deps: SigningDeps, fileUuid: string, expires: number): string {
  return crypto
    .createHmac('sha256', deps.secrets.urlSigningKey)
    .update(`file-download:v1:${fileUuid}:${expires}`, 'utf8')
    .digest('hex');
}

/** A URL valid for 24 hours from now (deps.clock), pointing to the newest version of the file. */
export function presignFileUrl(deps: SigningDeps, fileUuid: string): string {
  const expires = Math.floor(deps.clock.now().getTime() / 1000) + presignedUrlLifetimeSeconds;
  const signature = signatureOf(deps, fileUuid, expires);
  return `${deps.config.publicUrl}${presignedPath(fileUuid)}?expires=${expires}&signature=${signature}`;
}

/**
 * Checks a presigned URL's parameters: the signature first, in constant time (403
 * PRESIGNED_URL_INVALID for a missing, malformed or wrong one), then the expiry against
 * deps.clock (410 PRESIGNED_URL_EXPIRED once it has passed).
 */
export function verifyPresigned(
  deps: SigningDeps,
  fileUuid: string,
  expires: string | undefined,
  signature: string | undefined,
): void {
  const invalid = () =>
    new DomainError(presignedUrlCodes.invalid, 'The presigned URL is not valid (bad signature)');
  if (expires === undefined || !/^\d{1,12}$/.test(expires)) throw invalid();
  if (signature === undefined || !/^[0-9a-f]{64}$/i.test(signature)) throw invalid();
  const expected = Buffer.from(signatureOf(deps, fileUuid, Number(expires)), 'hex');
  const presented = Buffer.from(signature.toLowerCase(), 'hex');
  if (!crypto.timingSafeEqual(expected, presented)) throw invalid();
  if (deps.clock.now().getTime() >= Number(expires) * 1000) {
    throw new DomainError(
      presignedUrlCodes.expired,
      'The presigned URL has expired; ask for a new one (lookup or file listing) or use downloadUrl',
    );
  }
}
