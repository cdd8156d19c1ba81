import crypto from 'node:crypto';
import {
  constantTimeEqual,
  hashSecret,
  randomToken,
  type ServiceSecrets,
} from '../platform/secrets';

/** A fresh 6-digit code, uniformly drawn. */
export function newOtp(): string {
  return String(crypto.randomInt(0, 1_000_000)).padStart(6, '0');
}

/**
 * The stored form of a session's code: HMAC-SHA256 under a key derived (HKDF) from the service's
 * hash key and the session id, so a code hash is useless for any other session and a copied
 * database alone cannot test the million codes.
 */
export function otpHash(secrets: ServiceSecrets, sessionId: string, otp: string): string {
  const key = Buffer.from(
    crypto.hkdfSync('sha256', secrets.hashKey, Buffer.from(sessionId, 'utf8'), 'esign:otp', 32),
  );
  return crypto.createHmac('sha256', key).update(otp, 'utf8').digest('hex');
}

/** Whether `given` is the session's code, compared in constant time. */
export function otpMatches(
  secrets: ServiceSecrets,
  sessionId: string,
  stored: string,
  given: string,
): boolean {
  return constantTimeEqual(otpHash(secrets, sessionId, given), stored);
}

/** A bearer token (signing link, page credential) and the keyed hash that is stored. */
export function newBearer(secrets: ServiceSecrets): { token: string; hash: string } {
  const token = randomToken(32);
  return { token, hash: hashSecret(secrets, token) };
}

export const bearerHash = hashSecret;
