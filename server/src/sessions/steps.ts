import { messagesOf } from '@esign/shared/messages';
import type { AppDeps } from '../context';
import { inTransaction } from '../db/database';
import { metrics } from '../metrics';
import { otpSms, queueSms } from '../notify';
import { readSignatureImage, type SignatureImage } from '../pdf/signing';
import { finalizeWithToken, signWithServerKey } from '../signatures';
import { bindIdentity } from '../signing/certificates/identity';
import { decodeCertificate, type Preparation, type TokenSignatureInput } from '../signing/finalize';
import { certifiedKey } from '../signing/keys/signingKey';
import type { StepContext } from './access';
import { ticketOrigin } from './agentTickets';
import { DocumentChanged, sessionErrors } from './errors';
import { tokenSigning } from './initiate';
import { serverKeyFor } from './keys';
import { assertOtpTriesLeft, countOtpFailure, otpLimits, takeOtpSend } from './otpLimits';
import { dropPreparation, expectedSigner, prepareForSigner } from './prepare';
import {
  giveBackOtpTry,
  moveSessionPreparation,
  sessionById,
  storeNewOtp,
  takeOtpTry,
  updateSessionIf,
} from './queries';
import { recordSignature, type SignatureResult } from './record';
import {
  assertSessionOpen,
  maskEmail,
  maskPhone,
  maxImageBytes,
  otpLifetimeMs,
  otpMaxFailures,
  otpResendMs,
  tokenSigningTimeLagMs,
} from './rules';
import { newOtp, otpHash, otpMatches } from './secrets';

/** Moves the session if still open; otherwise answers why not (superseded, used, locked…). */
async function stillOpen(trx: Parameters<typeof sessionById>[0], id: number, now: Date) {
  assertSessionOpen((await sessionById(trx, id))!, now);
}

/** Seconds until a session whose last code went at `sentAt` may send another (0: now). */
function resendWait(sentAt: string | null, now: Date): number {
  if (!sentAt) return 0;
  return Math.max(0, Math.ceil((Date.parse(sentAt) + otpResendMs - now.getTime()) / 1000));
}

/**
 * POST /api/signing/{sessionId}/send-otp (otp_sms, cloud_hsm): a fresh 6-digit code valid 5
 * minutes, stored as an HMAC, sent by SMS to the signer's phone or by e-mail without one; at
 * most one a minute per session (429 OTP_RESEND_TOO_SOON with Retry-After) and, whatever the
 * session, within the signer's limits (otpLimits.ts: 429 OTP_SEND_LIMIT_REACHED, or
 * OTP_FAILURE_LIMIT_REACHED while their wrong codes are used up).
 */
export async function sendOtp(deps: AppDeps, step: StepContext) {
  const { session, subject } = step;
  const { signer } = subject;
  if (session.method !== 'otp_sms' && session.method !== 'cloud_hsm') {
    throw sessionErrors.methodMismatch(session.method, 'send-otp');
  }
  const now = deps.clock.now();
  const wait = resendWait(session.otp_sent_at, now);
  if (wait > 0) throw sessionErrors.otpTooSoon(wait);
  const otp = newOtp();
  const expiresAt = new Date(now.getTime() + otpLifetimeMs);
  const locale = deps.config.notify.locale;
  const channel: 'sms' | 'email' = signer.phone ? 'sms' : 'email';
  if (!signer.phone && !signer.email) throw sessionErrors.noOtpChannel(signer.name);
  const maskedTo = signer.phone ? maskPhone(signer.phone) : maskEmail(signer.email!);
  await inTransaction(deps.db, async (trx) => {
    const stored = await storeNewOtp(trx, session.id, session.otp_sent_at, {
      otp_hash: otpHash(deps.secrets, session.public_id, otp),
      otp_expires_at: expiresAt.toISOString(),
      otp_sent_at: now.toISOString(),
    });
    if (!stored) {
      // Closed, or another send (on this instance or another) came first: its minute runs.
      const current = (await sessionById(trx, session.id))!;
      assertSessionOpen(current, now);
      throw sessionErrors.otpTooSoon(resendWait(current.otp_sent_at, now) || 1);
    }
    await takeOtpSend(trx, session, now);
    const queued = signer.phone
      ? await queueSms(trx, deps, {
          tenantId: subject.tenantId,
          kind: `${subject.kind}_otp`,
          to: signer.phone,
          text: otpSms(locale, otp, otpLifetimeMs / 60_000),
          sensitive: true,
          discardAfter: expiresAt,
        })
      : null;
    if (!signer.phone) await subject.mailOtp(trx, deps, otp);
    await subject.audit(trx, {
      action: 'otp_sent',
      actor: step.actor,
      origin: step.origin,
      details: {
        channel,
        to: maskedTo,
        provider: channel === 'sms' ? deps.config.notify.sms.provider : 'smtp',
        ...(queued
          ? { outboxMessageId: queued.id, route: queued.sandbox ? 'sandbox' : 'direct' }
          : {}),
        expiresAt: expiresAt.toISOString(),
      },
    });
  });
  const message = messagesOf(locale).server.otpSent[channel](maskedTo);
  return { message, data: { otpExpiredAt: expiresAt.toISOString(), channel, to: maskedTo } };
}

/**
 * Checks the code of an OTP session, in one write transaction with the signer's limits: a try is
 * refused while their wrong codes fill the window (otpLimits.ts); a wrong code is counted (and
 * recorded) for the session and for the signer before the refusal; the fifth of a session locks
 * it, and the one that fills the signer's window answers 429 OTP_FAILURE_LIMIT_REACHED.
 */
async function checkOtp(deps: AppDeps, step: StepContext, otp: string | undefined) {
  const { session } = step;
  if (otp === undefined) throw sessionErrors.otpRequired();
  const storedHash = session.otp_hash;
  if (storedHash === null || session.otp_expires_at === null) throw sessionErrors.otpNotSent();
  const now = deps.clock.now();
  if (session.otp_expires_at <= now.toISOString()) {
    throw sessionErrors.otpExpired(session.otp_expires_at);
  }
  const wrong = await inTransaction(deps.db, async (trx) => {
    // The try is taken first (the row's lock), then the state is read as the last try left it.
    const failures = await takeOtpTry(trx, session.id);
    await stillOpen(trx, session.id, now);
    await assertOtpTriesLeft(trx, session, now);
    if (otpMatches(deps.secrets, session.public_id, storedHash, otp)) {
      await giveBackOtpTry(trx, session.id);
      return null;
    }
    const signerRoom = await countOtpFailure(trx, session, now);
    const locked = failures >= otpMaxFailures;
    if (locked) {
      await updateSessionIf(trx, session.id, 'open', {
        state: 'locked',
        ended_at: now.toISOString(),
        otp_hash: null,
      });
    }
    await step.subject.audit(trx, {
      action: 'otp_failed',
      actor: step.actor,
      origin: step.origin,
      details: { attempt: failures, locked },
    });
    return { sessionLeft: otpMaxFailures - failures, signerRoom };
  });
  if (wrong === null) return;
  metrics.otpFailures.inc({ method: session.method });
  const { sessionLeft, signerRoom } = wrong;
  if (signerRoom.left === 0) {
    throw sessionErrors.otpFailureLimit(signerRoom.retryAfter, otpLimits.failed.count);
  }
  if (sessionLeft <= 0) throw sessionErrors.locked();
  throw sessionLeft <= signerRoom.left
    ? sessionErrors.otpInvalid(sessionLeft, 'session')
    : sessionErrors.otpInvalid(signerRoom.left, 'signer');
}

/** A `data:image/png;base64,…` or `data:image/jpeg;base64,…` URL, decoded and read. */
function imageOf(dataUrl: string | undefined): SignatureImage {
  if (dataUrl === undefined) throw sessionErrors.imageRequired();
  const match = /^data:image\/(png|jpeg|jpg);base64,([A-Za-z0-9+/]*={0,2})$/.exec(dataUrl.trim());
  if (!match) throw sessionErrors.imageNotDataUrl();
  const bytes = Buffer.from(match[2]!, 'base64');
  if (bytes.length > maxImageBytes) throw sessionErrors.imageTooLarge(maxImageBytes);
  return readSignatureImage(bytes);
}

/** How many times a server-key confirm re-prepares after losing a race with a parallel signer. */
const serverKeyAttempts = 3;

/**
 * POST /api/signing/{sessionId}/confirm: otp_sms and cloud_hsm after their code,
 * image_signature with its picture. Signs with the signer's own key (cloud_hsm: its certificate
 * must name the signer, 422 SIGNER_IDENTITY_MISMATCH) or the seal. The revision is prepared
 * again now from the newest version, so that its /M and visible time are the moment of signing
 * (the signer consented to the document, not to revision bytes; a parallel signer may have
 * signed since initiate; image_signature's picture is part of the revision).
 */
export async function confirm(
  deps: AppDeps,
  step: StepContext,
  body: { otp?: string | undefined; signatureImage?: string | undefined },
): Promise<SignatureResult> {
  const { session, subject } = step;
  if (session.method === 'usb_token') throw sessionErrors.methodMismatch('usb_token', 'confirm');
  const image = session.method === 'image_signature' ? imageOf(body.signatureImage) : undefined;
  if (session.method !== 'image_signature') await checkOtp(deps, step, body.otp);
  const key = await serverKeyFor(deps, subject, session);
  // The signer's own certificate (cloud_hsm) is theirs, checked before anything is signed.
  const certificate = session.method === 'cloud_hsm' ? certifiedKey(key).chain[0] : undefined;
  const signer = certificate ? expectedSigner(subject) : 'service';
  if (certificate && signer !== 'service') bindIdentity(signer, certificate);
  let preparationId = session.preparation_id;
  for (let attempt = 1; ; attempt++) {
    const preparation = await freshPreparation(deps, step, preparationId, { image, certificate });
    preparationId = preparation.id;
    try {
      const result = await signWithServerKey(deps, preparation.id, key, {
        tenantId: subject.tenantId,
        signer,
        finishes: () => subject.isLastSignature(deps.db),
        commit: (trx, signed) =>
          recordSignature(trx, deps, step, signed, () => new DocumentChanged()),
      });
      metrics.signatures.inc({ method: session.method, level: result.summary.level });
      return result.committed;
    } catch (error) {
      if (!(error instanceof DocumentChanged) || attempt >= serverKeyAttempts) {
        throw error;
      }
    }
  }
}

/**
 * A new preparation of the newest version, made now, that the session takes over (the old one
 * abandoned).
 */
async function freshPreparation(
  deps: AppDeps,
  step: StepContext,
  /** The preparation the session holds now: abandoned once the new one is its. */
  currentId: number,
  made: { image?: SignatureImage | undefined; certificate?: Buffer | undefined },
): Promise<Preparation> {
  const { session, subject } = step;
  const newest = await subject.newestFile(deps.db);
  const preparation = await prepareForSigner(deps, {
    subject,
    method: session.method,
    version: newest,
    expiresAt: new Date(session.expires_at),
    ...(made.image ? { image: made.image } : {}),
    ...(made.certificate ? { certificate: made.certificate } : {}),
  });
  const moved = await inTransaction(deps.db, (trx) =>
    moveSessionPreparation(trx, session.id, currentId, {
      preparation_id: preparation.id,
      source_version: newest.version,
    }),
  );
  if (!moved) {
    await dropPreparation(deps, preparation.id, subject.tenantId);
    await stillOpen(deps.db, session.id, deps.clock.now());
    // Still open: another confirmation (or prepare) of this session moved it first; its
    // outcome decides, and this one leaves its preparation alone.
    throw sessionErrors.confirmationUnderWay();
  }
  await dropPreparation(deps, currentId, subject.tenantId);
  return preparation;
}

/**
 * POST /api/signing/{sessionId}/prepare (usb_token): the revision prepared again now, just
 * before the token signs, so that its /M and visible time are the moment of signing; with the
 * token's certificate, its name in the box and its identity checked before the token is asked
 * (422 SIGNER_IDENTITY_MISMATCH), and only that certificate may finalize it. Answers the new
 * contractHash with a ticket for the desktop agent; the earlier preparation can no longer be
 * finalized.
 */
export async function prepareForToken(
  deps: AppDeps,
  step: StepContext,
  input: { certificate?: string | undefined; origin?: string | undefined },
) {
  const { session, subject } = step;
  if (session.method !== 'usb_token') {
    throw sessionErrors.methodMismatch(session.method, 'prepare');
  }
  const certificate =
    input.certificate === undefined ? undefined : decodeCertificate(input.certificate);
  if (certificate) bindIdentity(expectedSigner(subject), certificate);
  const origin = await ticketOrigin(deps, subject.tenantId, input.origin);
  const preparation = await freshPreparation(deps, step, session.preparation_id, { certificate });
  const expiresAt = new Date(session.expires_at);
  return {
    contractHash: preparation.contractHash,
    expiresAt: session.expires_at,
    ...(await tokenSigning(deps, {
      origin,
      sessionId: session.public_id,
      contractHash: preparation.contractHash,
      expiresAt,
    })),
  };
}

/**
 * POST /api/signing/{sessionId}/sign-with-token: the engine's finalize with the client's
 * signature, chain and timestamp; the certificate must name the signer (422
 * SIGNER_IDENTITY_MISMATCH) and, unless the revision was prepared for it, carry the name its box
 * shows; the timestamp may come at most 5 minutes after the revision's /M (409
 * PREPARATION_STALE: prepare again). Engine refusals pass through and leave the session open; a
 * contract signed by someone else since initiate answers 409 DOCUMENT_CHANGED (initiate again:
 * the token signed bytes that no longer are the newest version).
 */
export async function signWithToken(
  deps: AppDeps,
  step: StepContext,
  input: TokenSignatureInput,
): Promise<SignatureResult> {
  const { session, subject } = step;
  if (session.method !== 'usb_token') {
    throw sessionErrors.methodMismatch(session.method, 'sign-with-token');
  }
  // Whether the file moved on since this revision was prepared is decided once, in the
  // transaction that records the signature (recordSignature).
  const result = await finalizeWithToken(deps, session.preparation_id, input, {
    tenantId: subject.tenantId,
    notBefore: new Date(session.created_at),
    signer: expectedSigner(subject),
    maxSigningTimeLagMs: tokenSigningTimeLagMs,
    finishes: () => subject.isLastSignature(deps.db),
    commit: (trx, signed) =>
      recordSignature(trx, deps, step, signed, () => sessionErrors.documentChanged()),
  });
  metrics.signatures.inc({ method: session.method, level: result.summary.level });
  return result.committed;
}

/**
 * POST /api/signing/{sessionId}/reject: the signer declines; the subject says what that ends
 * (a contract rejected and its creator e-mailed; a dossier task rejected by the workflow).
 */
export async function reject(deps: AppDeps, step: StepContext, reason: string) {
  const { session, subject } = step;
  const now = deps.clock.now();
  const result = await inTransaction(deps.db, async (trx) => {
    await subject.assertSignable(trx, now);
    const ended = await updateSessionIf(trx, session.id, 'open', {
      state: 'rejected',
      ended_at: now.toISOString(),
      otp_hash: null,
    });
    if (!ended) await stillOpen(trx, session.id, now);
    return subject.reject(trx, deps, reason, { actor: step.actor, origin: step.origin });
  });
  await dropPreparation(deps, session.preparation_id, subject.tenantId);
  return result;
}
