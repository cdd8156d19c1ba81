/** A signing key as the engine sees it: where it lives, its certificate chain, signing with it. */

import { EngineError } from '../../pdf/engineError';
import type { KeyAlgorithm, KeyReference, KeyStoreKind, SignatureScheme } from './keyStore';
import { type KeyStoreInputs, keyStoreOf } from './keyStores';

/** What a service key signs for: the service seal, or one signer's own key (cloud_hsm). */
export type SigningKeyPurpose = 'seal' | 'signer';

/** A key the service signs with, as the rest of the engine sees it. */
export interface SigningKey {
  id: number;
  purpose: SigningKeyPurpose;
  tenantId: number | null;
  ownerEmail: string | null;
  ownerName: string | null;
  algorithm: KeyAlgorithm;
  scheme: SignatureScheme;
  store: KeyStoreKind;
  reference: KeyReference;
  /** DER; null until issued (development CA) or imported (production). */
  certificate: Buffer | null;
  /** The issuers above the certificate, nearest first, DER (the development CA, or imported). */
  issuers: Buffer[];
  certificateSource: 'development_ca' | 'imported' | null;
  createdAt: string;
}

/** The default algorithm of keys the service generates (RSA: accepted by every validator). */
export const defaultKeyAlgorithm: KeyAlgorithm = 'rsa-2048';

/** A key with the certificate it signs under, and that certificate's issuers (nearest first). */
export interface CertifiedKey {
  key: SigningKey;
  certificate: Buffer;
  /** Certificate first, then its issuers: what goes into CMS `certificates`. */
  chain: Buffer[];
}

/**
 * The key's certificate, or 409 when production has none yet (the operator has not imported
 * the CA's answer to the key's CSR): signing without a certificate is never attempted.
 */
export function certifiedKey(key: SigningKey): CertifiedKey {
  if (key.certificate) {
    return { key, certificate: key.certificate, chain: [key.certificate, ...key.issuers] };
  }
  const whose = key.purpose === 'seal' ? 'The service seal' : `The signer key of ${key.ownerEmail}`;
  throw new EngineError(
    key.purpose === 'seal' ? 'SEAL_CERTIFICATE_MISSING' : 'SIGNER_CERTIFICATE_MISSING',
    `${whose} has no certificate yet: the operator imports it with "admin signer-key import-certificate --id ${key.id}"`,
  );
}

/** Signs `data` (hashed with SHA-256 by the store) with a service key; DER for ECDSA. */
export async function signWithKey(
  deps: KeyStoreInputs,
  key: SigningKey,
  data: Uint8Array,
): Promise<Buffer> {
  return keyStoreOf(deps).sign(key.reference, data, key.scheme);
}

export function signingKeyNotFound(id: number): EngineError {
  return new EngineError('SIGNING_KEY_NOT_FOUND', `No signing key with id ${id}`, {
    field: 'id',
  });
}
