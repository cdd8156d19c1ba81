import { EngineError } from '../../pdf/engineError';

/** The algorithms of keys the stores generate (the `signing_keys.algorithm` values). */
export type KeyAlgorithm = 'rsa-2048' | 'ec-p256';
export type SignatureScheme = 'rsa-pkcs1-sha256' | 'ecdsa-sha256';
/** Where keys live (the `signing_keys.store` values). */
export type KeyStoreKind = 'software' | 'pkcs11';

/**
 * The key store cannot be used now (module missing, token absent, PIN wrong or locked): 503
 * KEYSTORE_UNAVAILABLE; at start-up the process refuses to start with its message.
 */
export class KeyStoreUnavailable extends EngineError {
  constructor(message: string) {
    super('KEYSTORE_UNAVAILABLE', message);
  }
}

/** The scheme each algorithm signs with. */
export const schemeOf: Record<KeyAlgorithm, SignatureScheme> = {
  'rsa-2048': 'rsa-pkcs1-sha256',
  'ec-p256': 'ecdsa-sha256',
};

/**
 * Where a private key lives, as recorded in `signing_keys`: software keys carry their PKCS#8
 * sealed under the master secret; PKCS#11 keys are found on the token by CKA_ID.
 */
export type KeyLocator =
  | { store: 'software'; encryptedPrivateKey: string }
  | { store: 'pkcs11'; pkcs11Id: string; tokenLabel: string };

/** A key as a key store made it: what a `signing_keys` row records of it. */
export interface KeyReference {
  /** Unique; also the PKCS#11 CKA_LABEL and the additional data of the software encryption. */
  label: string;
  algorithm: KeyAlgorithm;
  /** DER SubjectPublicKeyInfo. */
  publicKeySpki: Buffer;
  locator: KeyLocator;
}

/**
 * One interface over the places keys live. A store never returns a private key: it signs.
 * `data` is the message itself (for CMS: the DER signed attributes); the store hashes it with
 * SHA-256. ECDSA signatures come back DER-encoded (Ecdsa-Sig-Value), as CMS and X.509 want.
 */
export interface KeyStore {
  readonly kind: KeyStoreKind;
  generateKey(label: string, algorithm: KeyAlgorithm): Promise<KeyReference>;
  publicKeySpki(ref: KeyReference): Promise<Buffer>;
  sign(ref: KeyReference, data: Uint8Array, scheme: SignatureScheme): Promise<Buffer>;
  /** Removes a key that was generated but not kept (lost a race to record it). */
  discardKey(ref: KeyReference): Promise<void>;
  /** Checks the store can be used (token present, PIN right); throws EngineError 503 if not. */
  ready(): Promise<void>;
  close(): Promise<void>;
}
