/** Certificates from the operator's CA for keys the service made (CSR flow), and the key listing. */
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import type { Db } from '../../db/database';
import { ApiError } from '../../errors/apiError';
import { isoNow } from '../../platform/clock';
import type { KeyAlgorithm, KeyStoreKind } from './keyStore';
import { findSigningKey, listSignerKeys, setCertificate } from './queries';
import {
  type KeyDeps,
  pemCertificates,
  reload,
  type SigningKey,
  signingKeyNotFound,
} from './signingKey';

function invalidCertificate(message: string): ApiError {
  return new ApiError(422, 'CERTIFICATE_INVALID', message, { field: 'file' });
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
  let certificates: x509.X509Certificate[];
  try {
    certificates = pemCertificates(pem).map((der) => new x509.X509Certificate(der));
  } catch (error) {
    throw invalidCertificate(
      `The file holds a certificate that does not parse: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (certificates.length === 0) {
    throw invalidCertificate('The file holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  }
  const keySpki = Buffer.from(row.public_key_spki);
  const leaf = certificates.find((certificate) =>
    Buffer.from(certificate.publicKey.rawData).equals(keySpki),
  );
  if (!leaf) {
    throw new ApiError(
      422,
      'CERTIFICATE_KEY_MISMATCH',
      `No certificate in the file is for signing key ${id}: their public keys differ from the key's`,
      { field: 'file' },
    );
  }
  const usage = leaf.getExtension(x509.KeyUsagesExtension);
  const signs = x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.nonRepudiation;
  if (usage && (usage.usages & signs) === 0) {
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
    der: Buffer.from(leaf.rawData),
    chainPem: issuers.length === 0 ? null : issuers.map((c) => c.toString('pem')).join('\n'),
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
    const certificate = row.certificate_der ? new x509.X509Certificate(row.certificate_der) : null;
    return {
      id: row.id,
      tenantCode: row.tenant_code,
      email: row.owner_email,
      name: row.owner_name,
      algorithm: row.algorithm,
      store: row.store,
      certificateSubject: certificate?.subject ?? null,
      certificateValidTo: certificate?.notAfter.toISOString() ?? null,
      certificateSource: row.certificate_source,
      createdAt: row.created_at,
    };
  });
}
