import crypto from 'node:crypto';
import { findUserById } from '../auth/queries';
import type { AppDeps } from '../context';
import { appendAuditEvent, systemActor } from '../contracts/audit';
import { inviteSigners, queueContractMail } from '../contracts/invitations';
import {
  type ContractRow,
  type ContractSignerRow,
  contractById,
  fileVersion,
  insertFileVersion,
  signersOf,
  transitionContract,
  updateSigner,
} from '../contracts/queries';
import type { Db } from '../db/database';
import { findPreparation, type SignedRevision } from '../signing/finalize';
import type { StepContext } from './access';
import { sessionById, updateSessionIf } from './queries';
import { assertContractSigning, assertSessionOpen } from './rules';

type MailDeps = Pick<AppDeps, 'db' | 'config' | 'clock' | 'secrets'>;

/** The spec's signature result. */
export interface SignatureResult {
  signatureId: string;
  signedAt: string;
  certificateInfo: { subject: string; issuer: string; validFrom: string; validTo: string };
  contractStatus: 'signing' | 'completed';
}

/** The contract's creator as an e-mail recipient, when they have an address. */
export async function creatorOf(trx: Db, createdByUserId: number) {
  const creator = await findUserById(trx, createdByUserId);
  if (!creator?.email) return null;
  return { name: creator.name?.trim() || creator.username, email: creator.email };
}

/**
 * After a signature: the contract is completed when no signer is left (creator e-mailed); when
 * the signer's order is done, the next order is invited and the creator told. Parallel signers
 * of an order still signing change nothing. Returns the contract's status.
 */
async function advanceTurn(
  trx: Db,
  deps: MailDeps,
  contract: ContractRow,
  signer: ContractSignerRow,
): Promise<SignatureResult['contractStatus']> {
  const signers = await signersOf(trx, contract.id);
  const pending = signers.filter((s) => s.role === 'signer' && s.status !== 'signed');
  const creator = await creatorOf(trx, contract.created_by_user_id);
  const now = deps.clock.now().toISOString();
  if (pending.length === 0) {
    await transitionContract(trx, contract.id, ['signing'], {
      status: 'completed',
      completed_at: now,
      ended_at: now,
      updated_at: now,
    });
    await appendAuditEvent(trx, deps.clock, contract.id, {
      action: 'completed',
      actor: systemActor,
      details: { signers: signers.filter((s) => s.role === 'signer').length },
    });
    if (creator) await queueContractMail(trx, deps, contract, 'completed', creator);
    return 'completed';
  }
  if (pending.some((s) => s.signing_order <= signer.signing_order)) return 'signing';
  const next = Math.min(...pending.map((s) => s.signing_order));
  const invited = await inviteSigners(
    trx,
    deps,
    contract,
    pending.filter((s) => s.signing_order === next && s.status === 'waiting'),
    creator?.name ?? null,
  );
  const turn = signers.filter(
    (s) => s.role === 'signer' && s.signing_order === signer.signing_order,
  );
  if (creator) {
    await queueContractMail(trx, deps, contract, 'signed', creator, {
      signedBy: turn.map((s) => s.name).join(', '),
    });
  }
  await appendAuditEvent(trx, deps.clock, contract.id, {
    action: 'sent',
    actor: systemActor,
    details: { order: next, invited },
  });
  return 'signing';
}

/**
 * The caller's part of the finalize transaction: the session ends signed, the signed file is
 * the contract's next version, the signer is signed, the `signed` event records the evidence,
 * and the turn advances. `changed` is thrown when another signature reached the contract
 * since this revision was prepared (it would be lost otherwise): everything rolls back.
 */
export async function recordSignature(
  trx: Db,
  deps: MailDeps,
  step: StepContext,
  signed: SignedRevision,
  changed: () => Error,
): Promise<SignatureResult> {
  const now = deps.clock.now();
  const at = now.toISOString();
  const { session, signer } = step;
  const contract = (await contractById(trx, session.contract_id))!;
  assertContractSigning(contract, now);
  const newest = (await fileVersion(trx, contract.id, 'newest'))!;
  // The preparation was made from this file: anything newer carries another signature.
  const prepared = await findPreparation({ db: trx }, signed.preparationId, contract.tenant_id);
  if (newest.sha256 !== prepared.sourceSha256) throw changed();
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
  await insertFileVersion(trx, {
    contract_id: contract.id,
    version: newest.version + 1,
    sha256: signed.sha256,
    size: signed.size,
    mime_type: 'application/pdf',
    signer_id: signer.id,
    created_at: at,
  });
  await updateSigner(trx, signer.id, { status: 'signed', signed_at: at, method: session.method });
  await appendAuditEvent(trx, deps.clock, contract.id, {
    action: 'signed',
    actor: step.actor,
    origin: step.origin,
    details: {
      signer: signer.email,
      signerName: signer.name,
      method: session.method,
      certificateSubject: certificate.subject,
      certificateSerial: certificate.serialNumber,
      certificateIssuer: certificate.issuer,
      timestampTime: timestamp.genTime,
      documentHashBefore: `sha256:${newest.sha256}`,
      documentHashAfter: `sha256:${signed.sha256}`,
      signedDigest: signed.summary.documentDigest,
      level: signed.summary.level,
      fileVersion: newest.version + 1,
    },
  });
  const contractStatus = await advanceTurn(trx, deps, contract, { ...signer, status: 'signed' });
  return { signatureId, signedAt: at, certificateInfo, contractStatus };
}
