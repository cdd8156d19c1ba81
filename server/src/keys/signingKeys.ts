/** Making the service seal and cloud_hsm signer keys, with their development certificates or CSRs. */
import 'reflect-metadata';
import crypto from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { SigningKeyPurpose } from '../db/schema';
import { type CertificateProfile, subjectOf } from '../dev/certificateProfiles';
import { developmentCa } from '../dev/developmentCa';
import { DomainError } from '../errors/domainError';
import { isoNow } from '../platform/clock';
import { certificateRequest } from '../signing/keys/csr';
import type { KeyAlgorithm, KeyReference } from '../signing/keys/keyStore';
import { keyStoreOf } from '../signing/keys/keyStores';
import { defaultKeyAlgorithm, type SigningKey } from '../signing/keys/signingKey';
import type { TenantRow } from '../tenancy/queries';
import {
  findSealKey,
  findSignerKey,
  insertSigningKey,
  setCertificate,
  userNameByEmail,
} from './queries';
import { type KeyDeps, reload, toSigningKey } from './storedKeys';

export interface SignerIdentity {
  email: string;
  /** The certificate's CN; when absent, the tenant user's name with this e-mail, else the e-mail. */
  name?: string;
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
  throw new DomainError('VALIDATION_ERROR', `"${value}" is not an e-mail address`, {
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
    throw new DomainError(
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
