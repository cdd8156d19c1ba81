import { z } from 'zod';
import { parseJsonColumn } from '../db/jsonColumn';
import type { ByteRange, DssMaterial } from '../pdf/signing';
import type { SignatureSummary } from '../signing/finalize/summary';

/**
 * The JSON columns of `signature_preparations`, read back through a schema: what the service
 * wrote when it prepared and finalized a signature (`db/jsonColumn.ts`).
 */

const offset = z.number().int().nonnegative();
const StoredByteRange = z.tuple([offset, offset, offset, offset]);

const CertificateSummarySchema = z.object({
  subject: z.string(),
  issuer: z.string(),
  serialNumber: z.string(),
  validFrom: z.string(),
  validTo: z.string(),
});

const IdentityBindingSchema = z.union([
  z.object({ status: z.literal('bound'), by: z.enum(['identityNumber', 'taxCode', 'email']) }),
  z.object({
    status: z.literal('not_bound'),
    reason: z.enum(['certificate_carries_none', 'signer_has_none']),
  }),
  z.object({ status: z.literal('service') }),
]);

const StoredSummary: z.ZodType<SignatureSummary> = z.object({
  fieldName: z.string(),
  signer: CertificateSummarySchema,
  signatureAlgorithm: z.enum(['rsaPkcs1Sha256', 'rsaPssSha256', 'ecdsaSha256']),
  trusted: z.boolean(),
  timestamp: z.object({ genTime: z.string(), tsa: z.string(), serialNumber: z.string() }),
  documentDigest: z.string(),
  signedSha256: z.string(),
  level: z.enum(['B-B', 'B-T', 'B-LT', 'B-LTA']),
  revocation: z.object({
    status: z.enum(['good', 'unknown']),
    chainStatus: z.enum(['good', 'unknown']),
    reasons: z.array(z.string()),
  }),
  identity: IdentityBindingSchema.optional(),
});

/** DER items as base64, per kind; a kind the service had nothing for may be absent. */
const base64List = z.array(z.string().base64()).optional();
const StoredMaterial = z.object({
  certificates: base64List,
  ocspResponses: base64List,
  crls: base64List,
});

export const byteRangeOf = (text: string): ByteRange =>
  parseJsonColumn(StoredByteRange, 'signature_preparations.byte_range', text);

export const summaryOf = (text: string): SignatureSummary =>
  parseJsonColumn(StoredSummary, 'signature_preparations.signature_summary', text);

/** The validation material (certificates, OCSP answers, CRLs) kept with a finalized signature. */
export function materialOf(text: string): DssMaterial {
  const stored = parseJsonColumn(
    StoredMaterial,
    'signature_preparations.validation_material',
    text,
  );
  const der = (items: string[] | undefined) =>
    (items ?? []).map((item) => Buffer.from(item, 'base64'));
  return {
    certificates: der(stored.certificates),
    ocspResponses: der(stored.ocspResponses),
    crls: der(stored.crls),
  };
}

/** The validation material as it is kept: base64 DER lists. */
export function materialText(material: DssMaterial): string {
  const b64 = (items: Buffer[]) => items.map((item) => item.toString('base64'));
  return JSON.stringify({
    certificates: b64(material.certificates),
    ocspResponses: b64(material.ocspResponses),
    crls: b64(material.crls),
  });
}
