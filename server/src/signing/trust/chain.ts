import { type ParsedCertificate, parseCertificate, validAt } from './certificate';

/**
 * Simple path building from a certificate to a trust anchor, as RFC 5280 needs it for the
 * timestamps and signatures we accept: issuer found by name and proven by its signature (Node's
 * `checkIssued` also honours keyUsage keyCertSign and the key identifiers), every certificate
 * of the path valid at `at`, every issuer a CA (basicConstraints). No policy or name
 * constraints processing; revocation is checked by the caller.
 */

export type ChainFailure =
  /** No path from the certificate to any trust anchor. */
  | 'untrusted'
  /** A path exists, but a certificate on it is not valid at the time asked. */
  | 'not_valid_at_time'
  /** A path exists, but an issuer on it is not a CA. */
  | 'issuer_not_ca';

export class ChainError extends Error {
  override readonly name = 'ChainError';
  constructor(
    readonly reason: ChainFailure,
    message: string,
  ) {
    super(message);
  }
}

export interface ChainOptions {
  /** Certificates that may stand between the leaf and an anchor (from the token, the request). */
  intermediates: readonly Buffer[];
  /** DER certificates trusted as they are. */
  trustAnchors: readonly Buffer[];
  /** Every certificate of the path must be valid at this instant. */
  at: Date;
}

/** Deep enough for any real hierarchy; bounds the search on hostile input. */
const maxPathLength = 8;

/** Every path (leaf first, anchor last) proven by names and signatures alone. */
function pathsToAnchors(
  leaf: ParsedCertificate,
  intermediates: ParsedCertificate[],
  anchors: ParsedCertificate[],
): ParsedCertificate[][] {
  const found: ParsedCertificate[][] = [];
  const isAnchor = (certificate: ParsedCertificate) =>
    anchors.some((anchor) => anchor.der.equals(certificate.der));
  if (isAnchor(leaf)) return [[leaf]];
  const walk = (path: ParsedCertificate[]): void => {
    const current = path.at(-1)!;
    if (path.length > maxPathLength || found.length > 0) return;
    for (const candidate of [...anchors, ...intermediates]) {
      if (path.some((seen) => seen.der.equals(candidate.der))) continue;
      if (!current.node.checkIssued(candidate.node)) continue;
      if (!current.node.verify(candidate.node.publicKey)) continue;
      if (isAnchor(candidate)) found.push([...path, candidate]);
      else walk([...path, candidate]);
    }
  };
  walk([leaf]);
  return found;
}

/**
 * The path from `leaf` to a trust anchor (leaf first, anchor last), or a ChainError saying why
 * there is none. An anchor that is the leaf itself is its own path.
 */
export function chainToTrustAnchor(leaf: Buffer, options: ChainOptions): Buffer[] {
  const parsedLeaf = parseCertificate(leaf);
  const intermediates = options.intermediates.map((der) => parseCertificate(der));
  const anchors = options.trustAnchors.map((der) => parseCertificate(der));
  const paths = pathsToAnchors(parsedLeaf, intermediates, anchors);
  const path = paths[0];
  if (path === undefined) {
    throw new ChainError(
      'untrusted',
      `no chain from "${parsedLeaf.node.subject}" to a trust anchor`,
    );
  }
  const expired = path.find((certificate) => !validAt(certificate, options.at));
  if (expired !== undefined) {
    throw new ChainError(
      'not_valid_at_time',
      `certificate "${expired.node.subject.replace(/\n/g, ', ')}" is not valid at ${options.at.toISOString()} (valid ${expired.notBefore.toISOString()} to ${expired.notAfter.toISOString()})`,
    );
  }
  const notCa = path.slice(1).find((certificate) => !certificate.isCa);
  if (notCa !== undefined) {
    throw new ChainError(
      'issuer_not_ca',
      `issuer "${notCa.node.subject.replace(/\n/g, ', ')}" is not a CA (basicConstraints)`,
    );
  }
  return path.map((certificate) => certificate.der);
}
