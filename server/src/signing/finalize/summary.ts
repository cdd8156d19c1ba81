import { X509Certificate } from 'node:crypto';
import type { IdentityBinding } from '../certificates/identity';
import type { SignatureAlgorithm } from '../cms';
import type { PadesLevel } from '../verification/level';

/** A certificate as the signature summary shows it. */
export interface CertificateSummary {
  /** Distinguished names as the certificate orders them, `C=VN, O=…, CN=…`. */
  subject: string;
  issuer: string;
  /** Lowercase hex. */
  serialNumber: string;
  validFrom: string;
  validTo: string;
}

/** What a finalized signature is, kept with its preparation and answered to the caller. */
export interface SignatureSummary {
  fieldName: string;
  signer: CertificateSummary;
  signatureAlgorithm: SignatureAlgorithm;
  /** The signer's chain reaches a trust anchor (false: accepted untrusted, outside production). */
  trusted: boolean;
  timestamp: { genTime: string; tsa: string; serialNumber: string };
  /** `sha256:<hex>` over the prepared revision's byte ranges: the preparation's contractHash. */
  documentDigest: string;
  /** SHA-256 of the signed file, lowercase hex. */
  signedSha256: string;
  /**
   * The level the signed file proves for this signature as stored (padesLevel, as verification
   * decides it): B-LT when the prepared revision's DSS answers for every certificate of the
   * signer's chain but the anchor, else B-T (a token signer's answers go into a later DSS).
   */
  level: PadesLevel;
  revocation: {
    /** The signer certificate at genTime; `unknown`: no source answered, signed without. */
    status: 'good' | 'unknown';
    /** Every certificate below the anchor: `unknown` when any had no answer. */
    chainStatus: 'good' | 'unknown';
    /** Why a source was skipped or had no answer, per certificate. */
    reasons: string[];
  };
  /**
   * Whether the certificate names the person the signature was expected from; absent when
   * the caller named nobody (and in summaries kept before identities were compared).
   */
  identity?: IdentityBinding;
}

const names = (text: string) => text.split('\n').join(', ');

export function certificateSummary(der: Buffer): CertificateSummary {
  const certificate = new X509Certificate(der);
  return {
    subject: names(certificate.subject),
    issuer: names(certificate.issuer),
    serialNumber: certificate.serialNumber.toLowerCase(),
    validFrom: new Date(certificate.validFrom).toISOString(),
    validTo: new Date(certificate.validTo).toISOString(),
  };
}

export const contractHashOf = (documentDigest: Buffer) =>
  `sha256:${documentDigest.toString('hex')}`;
