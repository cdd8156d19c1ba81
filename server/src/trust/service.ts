import type { Db } from '../db/database';
import { DomainError } from '../errors/domainError';
import {
  type CertificateFacts,
  CertificateInvalid,
  readCertificate,
} from '../signing/certificates/certificate';
import { certificatesFromFile } from '../signing/certificates/pem';
import {
  deleteTrustAnchor,
  findTrustAnchor,
  insertTrustAnchor,
  listTrustAnchorRows,
  type TrustAnchorRow,
  trustAnchorRows,
} from './queries';

/** A CA certificate that signer and TSA certificates may chain to. */
export interface TrustAnchor {
  id: number;
  /** null: global, trusted for every tenant. */
  tenantId: number | null;
  name: string;
  /** DER */
  certificate: Buffer;
  subject: string;
  /** SHA-256 of the DER, lowercase hex. */
  fingerprint: string;
  createdAt: string;
}

function anchorOf(row: TrustAnchorRow): TrustAnchor {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    certificate: Buffer.from(row.certificate),
    subject: row.subject,
    fingerprint: row.fingerprint,
    createdAt: row.created_at,
  };
}

/** The anchors a tenant's signatures and timestamps are checked against: global + its own. */
export async function trustAnchorsFor(db: Db, tenantId: number | null): Promise<TrustAnchor[]> {
  return (await trustAnchorRows(db, tenantId)).map(anchorOf);
}

export async function listTrustAnchors(
  db: Db,
  tenantId?: number,
): Promise<(TrustAnchor & { tenantCode: string | null })[]> {
  return (await listTrustAnchorRows(db, tenantId)).map((row) => ({
    ...anchorOf(row),
    tenantCode: row.tenant_code,
  }));
}

function invalidAnchor(message: string): DomainError {
  return new DomainError('TRUST_ANCHOR_INVALID', message, { field: 'file' });
}

/** `CN=Root, O=Org` from Node's one-per-line subject. */
function subjectLine(subject: string): string {
  return subject.split('\n').reverse().join(', ');
}

/**
 * Reads one CA certificate (PEM or DER) and checks it can anchor a chain: exactly one
 * certificate, well-formed, a CA (basicConstraints cA). 400 TRUST_ANCHOR_INVALID otherwise.
 */
export function readAnchorCertificate(content: Buffer): {
  der: Buffer;
  subject: string;
  fingerprint: string;
} {
  const certificates = certificatesFromFile(content);
  if (certificates.length !== 1) {
    throw invalidAnchor(`The file must hold exactly one certificate, found ${certificates.length}`);
  }
  let anchor: CertificateFacts;
  try {
    anchor = readCertificate(certificates[0]!, 'anchor');
  } catch (error) {
    if (error instanceof CertificateInvalid) {
      throw invalidAnchor(`The file is not a PEM or DER certificate: ${error.message}`);
    }
    throw error;
  }
  if (anchor.basicConstraintsCa !== true) {
    throw invalidAnchor('The certificate is not a CA (basicConstraints cA is not set)');
  }
  return {
    der: anchor.der,
    subject: subjectLine(anchor.x509.subject),
    fingerprint: anchor.fingerprint,
  };
}

/** Adds an anchor to a scope; the same certificate twice in one scope changes nothing. */
export async function addTrustAnchor(
  db: Db,
  now: string,
  input: { tenantId: number | null; name?: string; certificateFile: Buffer },
): Promise<{ anchor: TrustAnchor; created: boolean }> {
  const { der, subject, fingerprint } = readAnchorCertificate(input.certificateFile);
  const existing = await findTrustAnchor(db, input.tenantId, fingerprint);
  if (existing) return { anchor: anchorOf(existing), created: false };
  const row = await insertTrustAnchor(db, {
    tenant_id: input.tenantId,
    name: input.name ?? subject,
    certificate: der,
    subject,
    fingerprint,
    created_at: now,
  });
  return { anchor: anchorOf(row), created: true };
}

export async function removeTrustAnchor(db: Db, id: number): Promise<TrustAnchor> {
  const row = await deleteTrustAnchor(db, id);
  if (!row) throw new DomainError('TRUST_ANCHOR_NOT_FOUND', `No trust anchor with id ${id}`);
  return anchorOf(row);
}
