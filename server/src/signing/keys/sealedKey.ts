import crypto from 'node:crypto';
import { EngineError } from '../../pdf/engineError';

/**
 * Private keys at rest: AES-256-GCM under the master secret's `signing-keys` key, bound to the
 * key's label as additional data so that a sealed key copied onto another row does not open.
 * Format `v1.<iv>.<tag>.<ciphertext>`, base64url parts.
 */
export function sealPrivateKey(encryptionKey: Buffer, label: string, pkcs8: Buffer): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', encryptionKey, iv);
  cipher.setAAD(additionalData(label));
  const body = Buffer.concat([cipher.update(pkcs8), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), body].map(part).join('.');
}

/** The PKCS#8 DER; the caller wipes it after use. */
export function openPrivateKey(encryptionKey: Buffer, label: string, sealed: string): Buffer {
  const [version, iv, tag, body, ...extra] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || !body || extra.length > 0) {
    throw unreadable(label, 'its sealed form is not v1.<iv>.<tag>.<ciphertext>');
  }
  try {
    const decipher = crypto.createDecipheriv(
      'aes-256-gcm',
      encryptionKey,
      Buffer.from(iv, 'base64url'),
    );
    decipher.setAAD(additionalData(label));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
  } catch {
    // GCM authentication failed: another master secret (SECRET_KEY changed) or altered bytes.
    throw unreadable(label, 'it does not open with this master secret (was SECRET_KEY changed?)');
  }
}

const part = (value: string | Buffer) =>
  typeof value === 'string' ? value : value.toString('base64url');

const additionalData = (label: string) => Buffer.from(`esign:signing-key:${label}`, 'utf8');

function unreadable(label: string, why: string): EngineError {
  return new EngineError('SIGNING_KEY_UNREADABLE', `Private key ${label} is unreadable: ${why}`);
}
