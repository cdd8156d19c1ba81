/** A signing key as the engine sees it: its row, its certificate chain, signing with it. */

import type { SigningKeyPurpose } from '../../db/schema';
import { EngineError } from '../../pdf/engineError';
import { pemCertificates } from '../certificates/pem';
import type { ServiceDeps } from '../serviceDeps';
import {
  type KeyAlgorithm,
  type KeyReference,
  type KeyStoreKind,
  type SignatureScheme,
  schemeOf,
} from './keyStore';
import { keyStoreOf } from './keyStores';
import { findSigningKey, type SigningKeyRow } from './queries';

/** What the signing keys need of the runtime. */
export type KeyDeps = Pick<ServiceDeps, 'db' | 'config' | 'secrets' | 'clock'>;

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

export function toSigningKey(row: SigningKeyRow): SigningKey {
  const reference: KeyReference = {
    label: row.label,
    algorithm: row.algorithm,
    publicKeySpki: Buffer.from(row.public_key_spki),
    locator:
      row.store === 'software'
        ? { store: 'software', encryptedPrivateKey: row.encrypted_private_key ?? '' }
        : {
            store: 'pkcs11',
            pkcs11Id: row.pkcs11_id ?? '',
            tokenLabel: row.pkcs11_token_label ?? '',
          },
  };
  return {
    id: row.id,
    purpose: row.purpose,
    tenantId: row.tenant_id,
    ownerEmail: row.owner_email,
    ownerName: row.owner_name,
    algorithm: row.algorithm,
    scheme: schemeOf[row.algorithm],
    store: row.store,
    reference,
    certificate: row.certificate_der ? Buffer.from(row.certificate_der) : null,
    issuers: row.certificate_chain ? pemCertificates(row.certificate_chain) : [],
    certificateSource: row.certificate_source,
    createdAt: row.created_at,
  };
}

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
  deps: KeyDeps,
  key: SigningKey,
  data: Uint8Array,
): Promise<Buffer> {
  return keyStoreOf(deps).sign(key.reference, data, key.scheme);
}

export async function reload(deps: KeyDeps, id: number): Promise<SigningKey> {
  const row = await findSigningKey(deps.db, id);
  if (!row) throw signingKeyNotFound(id);
  return toSigningKey(row);
}

export function signingKeyNotFound(id: number): EngineError {
  return new EngineError('SIGNING_KEY_NOT_FOUND', `No signing key with id ${id}`, {
    field: 'id',
  });
}
