import type { DssMaterial } from '../../pdf/signing';
import { type CertificateFacts, isSelfIssued, readCertificate } from '../certificates/certificate';
import { issuerPath } from '../certificates/chain';
import { archivedAnswer } from './revocation';

/**
 * The PAdES baseline level a signature reaches, decided from what the file holds (ETSI EN 319
 * 142-1), never from what a signer intended to write or from answers fetched online:
 *
 * - `B-B`: no valid signature timestamp;
 * - `B-T`: a valid signature timestamp;
 * - `B-LT`: B-T, and the file holds the validation data of the signer's chain: every certificate
 *   of it except the trust anchor, each with a revocation answer (OCSP or CRL) from its issuer
 *   that was not stale at the signature's time, in the DSS or in the CMS itself;
 * - `B-LTA`: B-LT, and a valid document timestamp after the signature covers a revision whose
 *   DSS (with the CMS) already held that validation data.
 *
 * The TSA's chain is not required (our own DSS carries it when its CA answers): EU DSS and
 * pdfsig judge the level on the signer's chain too.
 */
export type PadesLevel = 'B-B' | 'B-T' | 'B-LT' | 'B-LTA';

export interface LevelEvidence {
  /** The signature timestamp verified: a proven time. */
  timestamped: boolean;
  /**
   * The signer's chain, signer first: to its trust anchor when one was found (`anchored`),
   * else as far as the file's own certificates go.
   */
  chain: Buffer[];
  anchored: boolean;
  /** The validation data the file holds now: its newest DSS and the signature's CMS. */
  material: DssMaterial;
  /** The validation data each valid document timestamp after the signature covers. */
  archived: DssMaterial[];
  /** The signature's time (the timestamp's genTime). */
  at: Date;
}

/** The one decision of a signature's level: verification and the signing summary both call it. */
export function padesLevel(evidence: LevelEvidence): PadesLevel {
  if (!evidence.timestamped) return 'B-B';
  const covered = (material: DssMaterial) =>
    validationDataCovers(evidence.chain, evidence.anchored, material, evidence.at);
  if (!covered(evidence.material)) return 'B-T';
  return evidence.archived.some(covered) ? 'B-LTA' : 'B-LT';
}

/**
 * Whether `material` holds, for every certificate of `chain` below its top, the certificate and
 * a revocation answer from its issuer usable at `at`. An unanchored chain must end at a
 * self-issued root (else its issuer is missing from the file); a signer certificate alone
 * (trusted as such, or self-signed) has nothing to be answered for and so is never B-LT.
 */
export function validationDataCovers(
  chain: Buffer[],
  anchored: boolean,
  material: DssMaterial,
  at: Date,
): boolean {
  if (chain.length < 2) return false;
  const facts = chain.map((der) => readCertificate(der));
  if (!anchored && !isSelfIssued(facts.at(-1)!)) return false;
  for (let index = 0; index + 1 < facts.length; index += 1) {
    const certificate = facts[index]!;
    if (!material.certificates.some((der) => der.equals(certificate.der))) return false;
    if (!archivedAnswer(material, certificate, facts[index + 1]!, at)) return false;
  }
  return true;
}

/** What the CMS of a signature carries itself: its certificates and any revocation values. */
export interface CmsMaterial {
  certificates: Buffer[];
  ocspResponses?: Buffer[];
  crls?: Buffer[];
}

/** The validation data a file holds for one signature: a DSS and the signature's own CMS. */
export function signatureMaterial(dss: DssMaterial, cms: CmsMaterial): DssMaterial {
  return {
    certificates: [...dss.certificates, ...cms.certificates],
    ocspResponses: [...dss.ocspResponses, ...(cms.ocspResponses ?? [])],
    crls: [...dss.crls, ...(cms.crls ?? [])],
  };
}

/**
 * The chain a level is judged on: the path to a trust anchor when verification built one, else
 * the issuers the file's certificates (CMS and DSS) give.
 */
export function levelChain(
  signer: CertificateFacts,
  anchoredChain: Buffer[] | undefined,
  pool: Buffer[],
): { chain: Buffer[]; anchored: boolean } {
  if (anchoredChain) return { chain: anchoredChain, anchored: true };
  return { chain: issuerPath(signer, pool).map((certificate) => certificate.der), anchored: false };
}
