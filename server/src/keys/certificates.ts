/** Certificates from the operator's CA for keys the service made (CSR flow), and the key listing. */
import type { Db } from '../db/database';
import { EngineError } from '../pdf/engineError';
import { isoNow } from '../platform/clock';
import {
  type CertificateFacts,
  CertificateInvalid,
  keyUsageBits,
  readCertificate,
  subjectName,
} from '../signing/certificates/certificate';
import { pemCertificates, toPem } from '../signing/certificates/pem';
import type { KeyAlgorithm, KeyStoreKind } from '../signing/keys/keyStore';
import { type SigningKey, signingKeyNotFound } from '../signing/keys/signingKey';
import { findSigningKey, listSignerKeys, setCertificate } from './queries';
import { type KeyDeps, reload } from './storedKeys';

function invalidCertificate(message: string): EngineError {
  return new EngineError('CERTIFICATE_INVALID', message, { field: 'file' });
}

/**
 * `admin signer-key import-certificate`: the CA's answer to a CSR, for the seal or a signer
 * key. The file holds the certificate and optionally its issuers (any order); the certificate
 * is the one whose public key is the key's, and must allow signing and be valid now.
 */
export async function importCertificate(
  deps: KeyDeps,
  id: number,
  pem: string,
): Promise<SigningKey> {
  const row = await findSigningKey(deps.db, id);
  if (!row) throw signingKeyNotFound(id);
  let certificates: CertificateFacts[];
  try {
    certificates = pemCertificates(pem).map((der, i) =>
      readCertificate(der, `certificate ${i + 1} of the file`),
    );
  } catch (error) {
    if (error instanceof CertificateInvalid) {
      throw invalidCertificate(error.message);
    }
    throw error;
  }
  if (certificates.length === 0) {
    throw invalidCertificate('The file holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  }
  const keySpki = Buffer.from(row.public_key_spki);
  const leaf = certificates.find((certificate) =>
    certificate.parts.subjectPublicKeyInfo.equals(keySpki),
  );
  if (!leaf) {
    throw new EngineError(
      'CERTIFICATE_KEY_MISMATCH',
      `No certificate in the file is for signing key ${id}: their public keys differ from the key's`,
      { field: 'file' },
    );
  }
  const signs = keyUsageBits.digitalSignature | keyUsageBits.nonRepudiation;
  if (leaf.keyUsage !== null && (leaf.keyUsage & signs) === 0) {
    throw invalidCertificate(
      'The certificate does not allow signing (keyUsage has neither digitalSignature nor nonRepudiation)',
    );
  }
  const now = deps.clock.now();
  if (leaf.notAfter < now || leaf.notBefore > now) {
    throw invalidCertificate(
      `The certificate is not valid now (valid from ${leaf.notBefore.toISOString()} to ${leaf.notAfter.toISOString()})`,
    );
  }
  const issuers = certificates.filter((certificate) => certificate !== leaf);
  await setCertificate(deps.db, id, {
    der: leaf.der,
    chainPem: issuers.length === 0 ? null : issuers.map((c) => toPem(c.der)).join(''),
    source: 'imported',
    at: isoNow(deps.clock),
  });
  return reload(deps, id);
}

export interface SignerKeyListing {
  id: number;
  tenantCode: string | null;
  email: string | null;
  name: string | null;
  algorithm: KeyAlgorithm;
  store: KeyStoreKind;
  certificateSubject: string | null;
  certificateValidTo: string | null;
  certificateSource: 'development_ca' | 'imported' | null;
  createdAt: string;
}

/** Signer keys of one tenant or all, for `admin signer-key list`. */
export async function listSignerKeyListings(
  db: Db,
  tenantId?: number,
): Promise<SignerKeyListing[]> {
  const rows = await listSignerKeys(db, tenantId);
  return rows.map((row) => {
    const certificate = row.certificate_der
      ? readCertificate(Buffer.from(row.certificate_der), `certificate of signing key ${row.id}`)
      : null;
    return {
      id: row.id,
      tenantCode: row.tenant_code,
      email: row.owner_email,
      name: row.owner_name,
      algorithm: row.algorithm,
      store: row.store,
      certificateSubject: certificate ? subjectName(certificate) : null,
      certificateValidTo: certificate?.notAfter.toISOString() ?? null,
      certificateSource: row.certificate_source,
      createdAt: row.created_at,
    };
  });
}
