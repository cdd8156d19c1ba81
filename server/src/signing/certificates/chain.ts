import {
  type CertificateFacts,
  hasKeyUsage,
  isIssuedBy,
  isSelfIssued,
  keyUsageBits,
  namesMatch,
  readCertificate,
  signatureVerifies,
  subjectName,
} from './certificate';

/** Why no chain from the signer to a trust anchor could be built. */
export type ChainFailureReason =
  /** The path ends at a self-signed root that is not a trust anchor. */
  | 'untrusted_root'
  /** The path stops at a certificate whose issuer is neither given nor an anchor. */
  | 'missing_intermediate'
  /** A certificate named as issuer did not sign the certificate below it. */
  | 'signature_mismatch'
  /** The issuer is not a CA (basicConstraints CA:true, keyUsage keyCertSign). */
  | 'issuer_not_ca'
  /** More intermediates below an issuer than its pathLenConstraint allows. */
  | 'path_too_long'
  /** The given chain starts with an end-entity certificate other than the signer's. */
  | 'chain_not_ending_at_signer';

export type ChainResult =
  | {
      ok: true;
      /** DER certificates, signer first, the trust anchor last. */
      chain: Buffer[];
    }
  | { ok: false; reason: ChainFailureReason; message: string };

/** RFC 5280 allows longer paths; real signer paths are 2-4 certificates deep. */
const maxDepth = 8;

const reasonRank: Record<ChainFailureReason, number> = {
  chain_not_ending_at_signer: 5,
  signature_mismatch: 4,
  issuer_not_ca: 3,
  path_too_long: 3,
  untrusted_root: 2,
  missing_intermediate: 1,
};

interface Failure {
  reason: ChainFailureReason;
  message: string;
}

function isCa(facts: CertificateFacts): boolean {
  return facts.basicConstraintsCa === true && hasKeyUsage(facts, keyUsageBits.keyCertSign);
}

/**
 * Builds the path signer → intermediates → trust anchor from the certificates given with the
 * signature (`provided`, any order; signer first is allowed) and the anchors. Issuers are found
 * by name (and AKI/SKI when both are present); each link is checked with Node's crypto
 * (`X509Certificate.verify`) and each issuer must be a CA allowed to sign certificates. When
 * several issuers fit (cross-certificates, re-keyed CAs) every one is tried. Validity dates are
 * not judged here (see checkSignerCertificate).
 */
export function buildChain(signer: Buffer, provided: Buffer[], anchors: Buffer[]): ChainResult {
  const leaf = readCertificate(signer, 'signer certificate');
  const given = provided.map((der, i) => readCertificate(der, `certificate ${i + 1} of the chain`));
  const trusted = anchors.map((der, i) => readCertificate(der, `trust anchor ${i + 1}`));

  // A chain is sent signer first: an end-entity certificate at its head that is neither the
  // signer's nor (by name) its issuer means the chain belongs to someone else.
  const head = given[0];
  if (
    head !== undefined &&
    !head.der.equals(leaf.der) &&
    head.basicConstraintsCa !== true &&
    !namesMatch(leaf, head)
  ) {
    return {
      ok: false,
      reason: 'chain_not_ending_at_signer',
      message: `The certificate chain starts with "${subjectName(head)}", not with the signer's certificate "${subjectName(leaf)}"`,
    };
  }
  const pool = given.filter((c) => !c.der.equals(leaf.der));

  let best: Failure | null = null;
  const note = (failure: Failure): void => {
    if (best === null || reasonRank[failure.reason] > reasonRank[best.reason]) best = failure;
  };

  const isAnchor = (c: CertificateFacts): boolean => trusted.some((a) => a.der.equals(c.der));

  const extend = (path: CertificateFacts[]): CertificateFacts[] | null => {
    const current = path[path.length - 1]!;
    if (isAnchor(current)) return path;
    if (path.length > maxDepth) {
      note({ reason: 'missing_intermediate', message: 'The chain is longer than allowed' });
      return null;
    }
    // Anchors first: the shortest trusted path wins.
    const candidates = [...trusted, ...pool].filter(
      (c) => namesMatch(current, c) && !path.some((p) => p.der.equals(c.der)),
    );
    if (candidates.length === 0) {
      note(
        isSelfIssued(current)
          ? {
              reason: 'untrusted_root',
              message: `The chain ends at "${subjectName(current)}", which is not a trust anchor`,
            }
          : {
              reason: 'missing_intermediate',
              message: `The issuer of "${subjectName(current)}" ("${current.x509.issuer.replaceAll('\n', ', ')}") is neither in the chain nor a trust anchor`,
            },
      );
      return null;
    }
    for (const candidate of candidates) {
      if (!signatureVerifies(current, candidate)) {
        note({
          reason: 'signature_mismatch',
          message: `"${subjectName(current)}" is not signed by the key of "${subjectName(candidate)}"`,
        });
        continue;
      }
      if (!isCa(candidate)) {
        note({
          reason: 'issuer_not_ca',
          message: `"${subjectName(candidate)}" is not a CA allowed to sign certificates (basicConstraints CA:true, keyUsage keyCertSign)`,
        });
        continue;
      }
      // RFC 5280 §4.2.1.9: self-issued certificates do not count; the signer is not one.
      const below = path.slice(1).filter((p) => !isSelfIssued(p)).length;
      if (candidate.pathLength !== null && below > candidate.pathLength) {
        note({
          reason: 'path_too_long',
          message: `"${subjectName(candidate)}" allows ${candidate.pathLength} intermediate certificate(s) below it, the chain has ${below}`,
        });
        continue;
      }
      const found = extend([...path, candidate]);
      if (found !== null) return found;
    }
    return null;
  };

  const path = extend([leaf]);
  if (path !== null) return { ok: true, chain: path.map((c) => c.der) };
  const failure: Failure = best ?? {
    reason: 'missing_intermediate',
    message: 'No chain to a trust anchor',
  };
  return { ok: false, ...failure };
}

/**
 * The path from `signer` up through the issuers found among `pool` (signature checked), signer
 * first, ending at a self-issued certificate or where no issuer is known. Nothing is trusted
 * here: it is what a file's own certificates say (see buildChain for a path to an anchor).
 */
export function issuerPath(signer: CertificateFacts, pool: Buffer[]): CertificateFacts[] {
  const candidates = pool.flatMap((der) => {
    try {
      return [readCertificate(der)];
    } catch {
      return [];
    }
  });
  const path = [signer];
  let current = signer;
  while (path.length < maxDepth && !isSelfIssued(current)) {
    const issuer = candidates.find(
      (candidate) =>
        !path.some((seen) => seen.der.equals(candidate.der)) && isIssuedBy(current, candidate),
    );
    if (!issuer) break;
    path.push(issuer);
    current = issuer;
  }
  return path;
}
