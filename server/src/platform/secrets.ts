import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Keys the service derives from one master secret: SECRET_KEY when set, otherwise a random key
 * created once under DATA_DIR (mode 0600) so the server and the operator CLI share it.
 * Each purpose gets its own HKDF-derived key, so one leaked key does not expose the others.
 */
export interface ServiceSecrets {
  /** HMAC key for hashing API keys, refresh tokens and other bearer secrets at rest. */
  hashKey: Buffer;
  /** AES-256-GCM key for secrets we must read back (webhook signing secrets). */
  encryptionKey: Buffer;
  /** HMAC key for presigned URLs. */
  urlSigningKey: Buffer;
  /** AES-256-GCM key for private keys at rest (software signing keys, the development CA). */
  signingKeyEncryptionKey: Buffer;
  /** JWT signing key of one environment. */
  jwtKey(environment: string): Buffer;
  /** Seed of the desktop agent's ticket key of one generation (rotation: the next generation). */
  agentTicketSeed(generation: number): Buffer;
}

function derive(master: Buffer, purpose: string): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', master, Buffer.alloc(0), `esign:${purpose}`, 32));
}

/**
 * SECRET_KEY's prefix for a secret given as the base64 of its bytes, the form of master.key:
 * `SECRET_KEY=base64:<contents of master.key>` gives a deployment the keys of the one that ran
 * on that file (a move to PostgreSQL, which requires SECRET_KEY). Any other value is its UTF-8.
 */
export const base64SecretPrefix = 'base64:';

export function loadMasterSecret(dataDir: string, configured: string | undefined): Buffer {
  if (configured?.startsWith(base64SecretPrefix)) {
    return Buffer.from(configured.slice(base64SecretPrefix.length).trim(), 'base64');
  }
  if (configured) return Buffer.from(configured, 'utf8');
  const file = path.join(dataDir, 'master.key');
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    // 'wx' fails when the file exists, so two processes starting together keep one key.
    fs.writeFileSync(file, crypto.randomBytes(32).toString('base64'), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
}

export function deriveSecrets(master: Buffer, jwtSecretOverride?: string): ServiceSecrets {
  return {
    hashKey: derive(master, 'hash'),
    encryptionKey: derive(master, 'encryption'),
    urlSigningKey: derive(master, 'url-signing'),
    signingKeyEncryptionKey: derive(master, 'signing-keys'),
    jwtKey: (environment) =>
      jwtSecretOverride
        ? derive(Buffer.from(jwtSecretOverride, 'utf8'), `jwt:${environment}`)
        : derive(master, `jwt:${environment}`),
    agentTicketSeed: (generation) => derive(master, `agent-ticket:${generation}`),
  };
}

/** Keyed hash of a high-entropy bearer secret, for storage and lookup. */
export function hashSecret(secrets: ServiceSecrets, value: string): string {
  return crypto.createHmac('sha256', secrets.hashKey).update(value, 'utf8').digest('hex');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && crypto.timingSafeEqual(left, right);
}

export function randomToken(bytes = 32): string {
  return crypto.randomBytes(bytes).toString('base64url');
}

export function encryptSecret(secrets: ServiceSecrets, plaintext: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', secrets.encryptionKey, iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const parts = [iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url'));
  return ['v1', ...parts].join('.');
}

export function decryptSecret(secrets: ServiceSecrets, sealed: string): string {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || !body) throw new Error('unknown sealed secret format');
  const decipher = crypto.createDecipheriv(
    'aes-256-gcm',
    secrets.encryptionKey,
    Buffer.from(iv, 'base64url'),
  );
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([
    decipher.update(Buffer.from(body, 'base64url')),
    decipher.final(),
  ]).toString('utf8');
}
