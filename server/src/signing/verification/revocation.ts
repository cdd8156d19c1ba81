import type { DssMaterial } from '../../pdf/signing';
import { checkRevocation, type RevocationDeps, type RevocationStatus } from '../certificates';
import { type CertificateFacts, readCertificate } from '../certificates/certificate';
import { judgeCrl } from '../certificates/crl';
import { judgeOcspResponse } from '../certificates/ocsp';
import type { SourceAnswer } from '../certificates/sourceAnswer';

export interface ChainRevocationAt {
  status: RevocationStatus;
  problems: string[];
}

/** Skew allowed between an answer's nextUpdate and the signing time. */
const skewMs = 5 * 60_000;
/** Judged at the signing time, an answer fetched later is not "from the future". */
const archivedAnswerSkewMs = 100 * 365 * 24 * 3600_000;

/**
 * An answer kept in the file (DSS or CMS) proves the status at the signing time when it is signed
 * by the issuer (or its responder), names this certificate, says good or revoked, and was not
 * stale at that time: it may be produced long after (that is what the DSS is for).
 */
export function archivedAnswer(
  dss: Pick<DssMaterial, 'ocspResponses' | 'crls'>,
  certificate: CertificateFacts,
  issuer: CertificateFacts,
  at: Date,
): Extract<SourceAnswer, { kind: 'answer' }> | undefined {
  const query = {
    certificate,
    issuer,
    url: '',
    hash: 'sha1' as const,
    timeoutMs: 0,
    maxBytes: 0,
    skewMs: archivedAnswerSkewMs,
  };
  const answers = [
    ...dss.ocspResponses.map((der) => judgeOcspResponse(der, query, null, at)),
    ...dss.crls.map((der) => judgeCrl(der, query, at)),
  ];
  return answers.find(
    (answer): answer is Extract<SourceAnswer, { kind: 'answer' }> =>
      answer.kind === 'answer' &&
      answer.status !== 'unknown' &&
      (answer.nextUpdate === undefined || answer.nextUpdate.getTime() >= at.getTime() - skewMs),
  );
}

/**
 * Revocation of every certificate of a built chain (signer first, anchor last) as of `at`: from
 * the document's DSS first, else online through checkRevocation. A certificate that names no
 * OCSP responder and no CRL is not asked about (nothing can be asked: pyHanko's default soft
 * policy); one whose sources do not answer is `unknown`. Revoked after `at` counts as good.
 */
export async function chainRevocationAt(
  deps: RevocationDeps,
  chain: Buffer[],
  at: Date,
  dss: DssMaterial,
): Promise<ChainRevocationAt> {
  const statuses: RevocationStatus[] = [];
  const problems: string[] = [];
  for (let i = 0; i + 1 < chain.length; i += 1) {
    const certificate = readCertificate(chain[i]!);
    const issuer = readCertificate(chain[i + 1]!);
    const which = i === 0 ? 'the signer certificate' : `chain certificate ${i}`;
    const archived = archivedAnswer(dss, certificate, issuer, at);
    if (archived) {
      const revoked =
        archived.status === 'revoked' &&
        archived.revokedAt !== undefined &&
        archived.revokedAt.getTime() <= at.getTime();
      statuses.push(revoked ? 'revoked' : 'good');
      if (revoked) {
        problems.push(
          `The DSS says ${which} was revoked at ${archived.revokedAt!.toISOString()}${archived.revocationReason ? ` (${archived.revocationReason})` : ''}`,
        );
      }
      continue;
    }
    if (certificate.ocspUrls.length === 0 && certificate.crlUrls.length === 0) continue;
    const online = await checkRevocation(deps, chain[i]!, chain[i + 1]!, at);
    statuses.push(online.status);
    if (online.status === 'revoked') {
      problems.push(
        `${which[0]!.toUpperCase()}${which.slice(1)} was revoked at ${online.revokedAt?.toISOString() ?? 'an unknown time'}${online.revocationReason ? ` (${online.revocationReason})` : ''}`,
      );
    } else if (online.status === 'unknown') {
      problems.push(
        `The revocation status of ${which} is unknown: ${online.reasons.join('; ') || 'no source answered'}`,
      );
    }
  }
  const status: RevocationStatus = statuses.includes('revoked')
    ? 'revoked'
    : statuses.includes('unknown')
      ? 'unknown'
      : 'good';
  return { status, problems };
}
