import 'reflect-metadata';
import crypto from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { AppDeps } from '../../context';
import type { Db } from '../../db/database';
import type { SigningKeyPurpose } from '../../db/schema';
import { ApiError } from '../../errors/apiError';
import { isoNow } from '../../platform/clock';
import type { TenantRow } from '../../tenancy/queries';
import { type CertificateProfile, subjectOf } from '../ca/certificateProfiles';
import { developmentCa } from '../ca/developmentCa';
import { certificateRequest } from './csr';
import {
  type KeyAlgorithm,
  type KeyReference,
  type KeyStoreKind,
  type SignatureScheme,
  schemeOf,
} from './keyStore';
import { keyStoreOf } from './keyStores';
import {
  findSealKey,
  findSignerKey,
  findSigningKey,
  insertSigningKey,
  listSignerKeys,
  type SigningKeyRow,
  setCertificate,
  userNameByEmail,
} from './queries';

/** What the signing keys need of the runtime. */
export type KeyDeps = Pick<AppDeps, 'db' | 'config' | 'secrets' | 'clock'>;

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

export interface SignerIdentity {
  email: string;
  /** The certificate's CN; when absent, the tenant user's name with this e-mail, else the e-mail. */
  name?: string;
}

/** The default algorithm of keys the service generates (RSA: accepted by every validator). */
export const defaultKeyAlgorithm: KeyAlgorithm = 'rsa-2048';

function toSigningKey(row: SigningKeyRow): SigningKey {
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
  throw new ApiError(
    409,
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

// --- Creation --------------------------------------------------------------------------------

interface NewKey {
  purpose: SigningKeyPurpose;
  tenantId: number | null;
  owner: { email: string; emailKey: string; name: string } | null;
  algorithm: KeyAlgorithm;
}

/**
 * Generates a key and records it; undefined when the row already exists (another process made
 * the seal or this signer's key first), in which case the new key is discarded.
 */
async function generateAndRecord(deps: KeyDeps, spec: NewKey): Promise<SigningKey | undefined> {
  const store = keyStoreOf(deps);
  const label = `esign-${spec.purpose}-${crypto.randomBytes(8).toString('hex')}`;
  const ref = await store.generateKey(label, spec.algorithm);
  const row = await recordKey(deps, spec, ref).catch(async (error: unknown) => {
    // Not recorded, so never usable: do not leave it on the token.
    await store.discardKey(ref);
    throw error;
  });
  if (!row) {
    await store.discardKey(ref);
    return undefined;
  }
  return toSigningKey(row);
}

function recordKey(deps: KeyDeps, spec: NewKey, ref: KeyReference) {
  return insertSigningKey(deps.db, {
    tenant_id: spec.tenantId,
    purpose: spec.purpose,
    owner_email: spec.owner?.email ?? null,
    owner_email_key: spec.owner?.emailKey ?? null,
    owner_name: spec.owner?.name ?? null,
    algorithm: spec.algorithm,
    store: ref.locator.store,
    public_key_spki: ref.publicKeySpki,
    encrypted_private_key:
      ref.locator.store === 'software' ? ref.locator.encryptedPrivateKey : null,
    pkcs11_id: ref.locator.store === 'pkcs11' ? ref.locator.pkcs11Id : null,
    pkcs11_token_label: ref.locator.store === 'pkcs11' ? ref.locator.tokenLabel : null,
    label: ref.label,
    created_at: isoNow(deps.clock),
  });
}

/** In development and sandbox, a key without certificate gets one from the development CA. */
async function withDevelopmentCertificate(
  deps: KeyDeps,
  key: SigningKey,
  profile: CertificateProfile,
): Promise<SigningKey> {
  if (key.certificate || deps.config.environment === 'production') return key;
  const ca = await developmentCa(deps);
  const der = await ca.issue(profile, key.reference.publicKeySpki);
  await setCertificate(deps.db, key.id, {
    der,
    chainPem: ca.certificatePem,
    source: 'development_ca',
    at: isoNow(deps.clock),
  });
  return reload(deps, key.id);
}

async function reload(deps: KeyDeps, id: number): Promise<SigningKey> {
  const row = await findSigningKey(deps.db, id);
  if (!row) throw signingKeyNotFound(id);
  return toSigningKey(row);
}

const sealProfile = (deps: KeyDeps): CertificateProfile => ({
  kind: 'seal',
  serviceName: deps.config.serviceName,
});

/**
 * The service seal (otp_sms, image_signature, the audit PDF), created on first use. In
 * development and sandbox it comes with a development CA certificate; in production its
 * certificate is null until the operator imports one (CSR from `sealCertificateRequest`).
 */
export async function sealKey(deps: KeyDeps): Promise<SigningKey> {
  let row = await findSealKey(deps.db);
  if (!row) {
    const made = await generateAndRecord(deps, {
      purpose: 'seal',
      tenantId: null,
      owner: null,
      algorithm: defaultKeyAlgorithm,
    });
    if (made) return withDevelopmentCertificate(deps, made, sealProfile(deps));
    row = await findSealKey(deps.db);
    if (!row) throw new Error('the seal key vanished after a conflicting insert');
  }
  return withDevelopmentCertificate(deps, toSigningKey(row), sealProfile(deps));
}

/** A PKCS#10 request for the seal key, subject from SERVICE_NAME. */
export async function sealCertificateRequest(deps: KeyDeps, key: SigningKey): Promise<string> {
  const request = await certificateRequest(
    keyStoreOf(deps),
    key.reference,
    subjectOf(sealProfile(deps)),
    [],
  );
  return request.toString('pem');
}

/** NFC, trimmed, lower-case: how signer e-mails are compared. */
export function signerEmailKey(email: string): string {
  return email.normalize('NFC').trim().toLowerCase();
}

const emailShape = /^[^\s@]+@[^\s@]+\.[^\s@]+$/u;

/** A signer's e-mail as given, or a 400 naming the field. */
export function signerEmail(value: string): string {
  const email = value.normalize('NFC').trim();
  if (emailShape.test(email) && email.length <= 254) return email;
  throw new ApiError(400, 'VALIDATION_ERROR', `"${value}" is not an e-mail address`, {
    field: 'email',
  });
}

async function signerProfile(
  deps: KeyDeps,
  tenant: TenantRow,
  signer: SignerIdentity,
): Promise<{ email: string; emailKey: string; name: string; profile: CertificateProfile }> {
  const email = signerEmail(signer.email);
  const emailKey = signerEmailKey(email);
  const name =
    signer.name?.trim() || (await userNameByEmail(deps.db, tenant.id, emailKey)) || email;
  return {
    email,
    emailKey,
    name,
    profile: { kind: 'signer', name, email, organization: tenant.name },
  };
}

function generateSignerKey(
  deps: KeyDeps,
  tenant: TenantRow,
  owner: { email: string; emailKey: string; name: string },
): Promise<SigningKey | undefined> {
  return generateAndRecord(deps, {
    purpose: 'signer',
    tenantId: tenant.id,
    owner,
    algorithm: defaultKeyAlgorithm,
  });
}

/**
 * A cloud_hsm signer's key, made on the signer's first cloud_hsm session: one per (tenant,
 * e-mail). In development and sandbox it has a development CA certificate; in production the
 * certificate may be null (the caller refuses to sign until one is imported).
 */
export async function issueSignerCertificate(
  deps: KeyDeps,
  tenant: TenantRow,
  signer: SignerIdentity,
): Promise<SigningKey> {
  const identity = await signerProfile(deps, tenant, signer);
  let row = await findSignerKey(deps.db, tenant.id, identity.emailKey);
  if (!row) {
    const made = await generateSignerKey(deps, tenant, identity);
    if (made) return withDevelopmentCertificate(deps, made, identity.profile);
    row = await findSignerKey(deps.db, tenant.id, identity.emailKey);
    if (!row) throw new Error('the signer key vanished after a conflicting insert');
  }
  const key = toSigningKey(row);
  // The certificate keeps the name the key was made with.
  const profile: CertificateProfile = {
    kind: 'signer',
    name: key.ownerName ?? identity.name,
    email: identity.email,
    organization: tenant.name,
  };
  return withDevelopmentCertificate(deps, key, profile);
}

export interface CreatedSignerKey {
  key: SigningKey;
  /** Production: the PKCS#10 request to have signed by a CA, PEM. */
  certificateRequest: string | null;
}

/**
 * `admin signer-key create`: a new key for a signer (409 when the signer has one). Development
 * and sandbox: with its development CA certificate; production: with a CSR to be signed.
 */
export async function createSignerKey(
  deps: KeyDeps,
  tenant: TenantRow,
  signer: SignerIdentity,
): Promise<CreatedSignerKey> {
  const identity = await signerProfile(deps, tenant, signer);
  const existing = await findSignerKey(deps.db, tenant.id, identity.emailKey);
  const made = existing === undefined ? await generateSignerKey(deps, tenant, identity) : undefined;
  if (!made) {
    throw new ApiError(
      409,
      'SIGNER_KEY_EXISTS',
      `${identity.email} already has a signer key in tenant ${tenant.code}`,
      { field: 'email' },
    );
  }
  if (deps.config.environment !== 'production') {
    return {
      key: await withDevelopmentCertificate(deps, made, identity.profile),
      certificateRequest: null,
    };
  }
  const request = await certificateRequest(
    keyStoreOf(deps),
    made.reference,
    subjectOf(identity.profile),
    [new x509.SubjectAlternativeNameExtension([{ type: 'email', value: identity.email }])],
  );
  return { key: made, certificateRequest: request.toString('pem') };
}

// --- Certificates ----------------------------------------------------------------------------

function signingKeyNotFound(id: number): ApiError {
  return new ApiError(404, 'SIGNING_KEY_NOT_FOUND', `No signing key with id ${id}`, {
    field: 'id',
  });
}

/** Every certificate of a PEM text, in order, DER. */
export function pemCertificates(pem: string): Buffer[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => Buffer.from(new x509.X509Certificate(block).rawData));
}

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
