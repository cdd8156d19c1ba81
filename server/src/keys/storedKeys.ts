/** The service's signing keys as the database records them (`signing_keys`). */
import type { AppDeps } from '../context';
import { pemCertificates } from '../signing/certificates/pem';
import { type KeyReference, schemeOf } from '../signing/keys/keyStore';
import { type SigningKey, signingKeyNotFound } from '../signing/keys/signingKey';
import { findSigningKey, type SigningKeyRow } from './queries';

/** What the stored keys need of the runtime. */
export type KeyDeps = Pick<AppDeps, 'db' | 'config' | 'secrets' | 'clock'>;

/** A `signing_keys` row as the engine's SigningKey. */
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

/** The key `id` as stored now (after its certificate changed, say). */
export async function reload(deps: KeyDeps, id: number): Promise<SigningKey> {
  const row = await findSigningKey(deps.db, id);
  if (!row) throw signingKeyNotFound(id);
  return toSigningKey(row);
}
