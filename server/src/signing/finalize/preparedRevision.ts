import type { ByteRange, DssMaterial } from '../../pdf/signing';
import type { RevocationDeps } from '../certificates';
import type { SignatureSummary } from './summary';
import {
  isEmptyMaterial,
  materialForEarlierSignatures,
  materialForSignerChain,
  mergeMaterial,
} from './validationData';

/** A prepared revision of a stored PDF waiting for (or done with) its signature. */
export interface Preparation {
  id: number;
  tenantId: number;
  sourceSha256: string;
  preparedSha256: string;
  fieldName: string;
  byteRange: ByteRange;
  contentsOffset: number;
  contentsHexLength: number;
  documentDigest: Buffer;
  /** `sha256:<hex of documentDigest>`: what the signer is shown and signs over. */
  contractHash: string;
  signingTime: Date;
  createdAt: Date;
  expiresAt: Date;
  state: 'open' | 'finalized' | 'abandoned';
  /** The name the visible box and /Name show. */
  shownName: string | null;
  /** SHA-256 (hex) of the certificate the revision was prepared for: only it may finalize. */
  certificateSha256: string | null;
  finalizedAt: Date | null;
  signedSha256: string | null;
  summary: SignatureSummary | null;
}

/**
 * The DSS material of a new revision of `sourcePath`: what its signatures lack (from `stored`,
 * else asked again) and the answers for a service key's chain; undefined when there is none.
 */
export async function revisionDss(
  deps: RevocationDeps,
  sourcePath: string,
  stored: DssMaterial[],
  signerChain: Buffer[] | undefined,
): Promise<DssMaterial | undefined> {
  const material = mergeMaterial(
    await materialForEarlierSignatures(deps, sourcePath, stored),
    signerChain ? await materialForSignerChain(deps, signerChain) : undefined,
  );
  return isEmptyMaterial(material) ? undefined : material;
}
