import crypto from 'node:crypto';
import type { Db } from '../db/database';
import type { SignedRevision } from '../signatures';
import type { IdentityBinding } from '../signing/certificates/identity';
import type { StepContext } from './access';
import { sessionById, updateSessionIf } from './queries';
import { assertSessionOpen } from './rules';
import type { SubjectDeps, SubjectSigned } from './subject';

/** The spec's signature result, with where the subject stands. */
export type SignatureResult = {
  signatureId: string;
  signedAt: string;
  certificateInfo: { subject: string; issuer: string; validFrom: string; validTo: string };
} & SubjectSigned;

/**
 * The identity binding as the audit trail (and its PDF, one "key: value" line each) shows it:
 * `bound` with the kind of identifier that matched, `not_bound` with why, `service` for the seal.
 */
function identityDetails(identity: IdentityBinding | undefined): Record<string, string> {
  if (!identity) return {};
  return {
    identityBinding: identity.status,
    ...(identity.status === 'bound' ? { identityBoundBy: identity.by } : {}),
    ...(identity.status === 'not_bound' ? { identityNotBoundBecause: identity.reason } : {}),
  };
}

/**
 * The caller's part of the finalize transaction: the session ends signed, the `signed` event
 * records the evidence, and the subject takes the signed file as its next version and advances
 * (subject.commitSignature). `changed` is thrown when another signature reached the file since
 * this revision was prepared (it would be lost otherwise): everything rolls back.
 */
export async function recordSignature(
  trx: Db,
  deps: SubjectDeps,
  step: StepContext,
  signed: SignedRevision,
  changed: () => Error,
): Promise<SignatureResult> {
  const now = deps.clock.now();
  const at = now.toISOString();
  const { session, subject } = step;
  await subject.assertSignable(trx, now);
  const newest = await subject.newestFile(trx);
  // The preparation was made from this file: anything newer carries another signature.
  if (newest.sha256 !== signed.sourceSha256) throw changed();
  const { signer: certificate, timestamp } = signed.summary;
  const certificateInfo = {
    subject: certificate.subject,
    issuer: certificate.issuer,
    validFrom: certificate.validFrom,
    validTo: certificate.validTo,
  };
  const signatureId = crypto.randomUUID();
  const ended = await updateSessionIf(trx, session.id, 'open', {
    state: 'signed',
    ended_at: at,
    signature_id: signatureId,
    signed_at: at,
    certificate_info: JSON.stringify(certificateInfo),
    otp_hash: null,
  });
  if (!ended) {
    assertSessionOpen((await sessionById(trx, session.id))!, now);
  }
  await subject.audit(trx, {
    action: 'signed',
    actor: step.actor,
    origin: step.origin,
    details: {
      signer: subject.signer.email,
      signerName: subject.signer.name,
      method: session.method,
      certificateSubject: certificate.subject,
      certificateSerial: certificate.serialNumber,
      certificateIssuer: certificate.issuer,
      timestampTime: timestamp.genTime,
      documentHashBefore: `sha256:${newest.sha256}`,
      documentHashAfter: `sha256:${signed.sha256}`,
      signedDigest: signed.summary.documentDigest,
      level: signed.summary.level,
      ...identityDetails(signed.summary.identity),
      fileVersion: newest.version + 1,
    },
  });
  const where = await subject.commitSignature(trx, deps, {
    signed,
    method: session.method,
    source: newest,
  });
  return { signatureId, signedAt: at, certificateInfo, ...where };
}
