import crypto from 'node:crypto';
import { isIssuedBy, readCertificate } from './certificate';
import { askCrl } from './crl';
import { askOcsp } from './ocsp';
import type {
  RevocationDeps,
  RevocationOptions,
  RevocationResult,
  RevocationStatus,
} from './revocationTypes';
import type { SourceAnswer } from './sourceAnswer';

export type {
  RevocationDeps,
  RevocationOptions,
  RevocationResult,
  RevocationStatus,
} from './revocationTypes';

const defaults = {
  timeoutMs: 5_000,
  certIdHash: 'sha1',
  maxCrlBytes: 10 * 1024 * 1024,
  skewMs: 5 * 60_000,
} as const;

/** A judge that throws on a malformed answer is a malformed answer, not a crash. */
async function safely(
  ask: () => Promise<{ answer: SourceAnswer; der?: Buffer }>,
): Promise<{ answer: SourceAnswer; der?: Buffer }> {
  try {
    return await ask();
  } catch (error) {
    return {
      answer: { kind: 'unusable', reason: `malformed answer (${(error as Error).message})` },
    };
  }
}

/**
 * The answer as of `at` (the signature's time): a certificate revoked after `at` was still good
 * when it signed (as EU DSS and pyHanko judge it); the revocation time is reported anyway.
 */
function resultOf(
  answer: Extract<SourceAnswer, { kind: 'answer' }>,
  at: Date,
  source: 'ocsp' | 'crl',
  reasons: string[],
): RevocationResult {
  const revokedBefore =
    answer.status === 'revoked' &&
    answer.revokedAt !== undefined &&
    answer.revokedAt.getTime() <= at.getTime();
  const status = answer.status === 'revoked' && !revokedBefore ? 'good' : answer.status;
  return {
    status,
    source,
    ...(answer.revokedAt === undefined ? {} : { revokedAt: answer.revokedAt }),
    ...(answer.revocationReason === undefined ? {} : { revocationReason: answer.revocationReason }),
    thisUpdate: answer.thisUpdate,
    ...(answer.nextUpdate === undefined ? {} : { nextUpdate: answer.nextUpdate }),
    reasons: answer.note === undefined ? reasons : [...reasons, answer.note],
  };
}

/**
 * Is `certificate` (DER) revoked, according to its issuer (DER), as of `at`? OCSP first (the
 * certificate's AIA URLs), else the CRLs of its distribution points, each fetched through the
 * SSRF-safe client (plain http allowed: both answers are signed). Never throws for network or
 * answer trouble: such a source is skipped with a reason, and when none answers the status is
 * `unknown` with source `none`; the caller decides what unknown means. An OCSP `unknown` also
 * falls through to the CRL. A certificate and issuer that do not parse throw 422
 * CERTIFICATE_INVALID; an issuer that did not issue the certificate gives `unknown`.
 */
export async function checkRevocation(
  deps: RevocationDeps,
  certificate: Buffer,
  issuer: Buffer,
  at: Date,
  options: RevocationOptions = {},
): Promise<RevocationResult> {
  const settings = { ...defaults, ...options };
  const subject = readCertificate(certificate, 'certificate');
  const issuing = readCertificate(issuer, 'issuer certificate');
  const reasons: string[] = [];
  if (!isIssuedBy(subject, issuing)) {
    return {
      status: 'unknown',
      source: 'none',
      reasons: ['the issuer given did not issue the certificate'],
    };
  }
  const cacheKey = `${crypto.createHash('sha256').update(issuing.parts.subjectPublicKeyInfo).digest('hex')}:${subject.serialHex}`;
  const cached = deps.revocationCache?.get(cacheKey, deps.clock.now());
  if (cached != null) {
    const evidence = cached.source === 'ocsp' ? { ocspResponse: cached.der } : { crl: cached.der };
    return { ...resultOf(cached.answer, at, cached.source, []), ...evidence };
  }
  const remember = (source: 'ocsp' | 'crl', answer: SourceAnswer, der: Buffer): void => {
    if (answer.kind === 'answer') deps.revocationCache?.set(cacheKey, { source, answer, der });
  };

  let ocspUnknown: RevocationResult | null = null;
  for (const url of subject.ocspUrls) {
    const { answer, der } = await safely(() =>
      askOcsp(deps, {
        certificate: subject,
        issuer: issuing,
        url,
        hash: settings.certIdHash,
        timeoutMs: settings.timeoutMs,
        skewMs: settings.skewMs,
      }),
    );
    if (answer.kind === 'unusable') {
      reasons.push(answer.reason);
      continue;
    }
    const result = { ...resultOf(answer, at, 'ocsp', reasons), ocspResponse: der! };
    if (result.status !== 'unknown') {
      remember('ocsp', answer, der!);
      return result;
    }
    // Kept in the running list so that the final answer names it beside the CRL's fate.
    if (answer.note !== undefined) reasons.push(answer.note);
    ocspUnknown = result;
    break;
  }
  if (subject.ocspUrls.length === 0) reasons.push('the certificate names no OCSP responder');

  for (const url of subject.crlUrls) {
    const { answer, der } = await safely(() =>
      askCrl(
        deps,
        {
          certificate: subject,
          issuer: issuing,
          timeoutMs: settings.timeoutMs,
          maxBytes: settings.maxCrlBytes,
          skewMs: settings.skewMs,
        },
        url,
      ),
    );
    if (answer.kind === 'unusable') {
      reasons.push(answer.reason);
      continue;
    }
    remember('crl', answer, der!);
    return { ...resultOf(answer, at, 'crl', reasons), crl: der! };
  }
  if (subject.crlUrls.length === 0) reasons.push('the certificate names no CRL distribution point');
  if (ocspUnknown !== null) return { ...ocspUnknown, reasons };
  return { status: 'unknown', source: 'none', reasons };
}

export interface ChainRevocation {
  /** `revoked` if any certificate is, else `unknown` if any is, else `good`. */
  status: RevocationStatus;
  /** One result per certificate below the trust anchor, signer first (DSS material). */
  certificates: RevocationResult[];
}

/**
 * Revocation of every certificate of a built chain (signer first, anchor last; see buildChain)
 * except the anchor, each asked of its own issuer, one after the other.
 */
export async function checkChainRevocation(
  deps: RevocationDeps,
  chain: Buffer[],
  at: Date,
  options: RevocationOptions = {},
): Promise<ChainRevocation> {
  const certificates: RevocationResult[] = [];
  for (let i = 0; i + 1 < chain.length; i += 1) {
    certificates.push(await checkRevocation(deps, chain[i]!, chain[i + 1]!, at, options));
  }
  const statuses = certificates.map((c) => c.status);
  const status: RevocationStatus = statuses.includes('revoked')
    ? 'revoked'
    : statuses.includes('unknown')
      ? 'unknown'
      : 'good';
  return { status, certificates };
}
