import { messagesOf } from '@esign/shared/messages';
import { appendAuditEvent } from '../audit/chain';
import {
  type AuditActor,
  type AuditEventInput,
  contractTrail,
  systemActor,
} from '../audit/subject';
import { findUserById } from '../auth/queries';
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
import type { Clock } from '../platform/clock';
import { assertContractSigning, signatureBox } from './rules';
import type { CommittedSignature, SigningSubject, SubjectDeps } from './subject';

export function signerActor(signer: ContractSignerRow): AuditActor {
  return { kind: 'signer', signerId: signer.id, name: `${signer.name} <${signer.email}>` };
}

/** The contract's creator as an e-mail recipient, when they have an address. */
async function creatorOf(trx: Db, createdByUserId: number) {
  const creator = await findUserById(trx, createdByUserId);
  if (!creator?.email) return null;
  return { name: creator.name?.trim() || creator.username, email: creator.email };
}

/** The archive revision of the finished contract and the version it becomes. */
type Archive = NonNullable<CommittedSignature['signed']['archived']> & { version: number };

/**
 * After a signature: the contract is completed when no signer is left (its archive revision,
 * when made, becomes its last version; creator e-mailed); when the signer's order is done, the
 * next order is invited and the creator told. Parallel signers of an order still signing
 * change nothing. Returns the contract's status.
 */
async function advanceTurn(
  trx: Db,
  deps: SubjectDeps,
  contract: ContractRow,
  signer: ContractSignerRow,
  archive: Archive | undefined,
): Promise<'signing' | 'completed'> {
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
    if (archive) {
      await insertFileVersion(trx, {
        contract_id: contract.id,
        version: archive.version,
        kind: 'archive',
        sha256: archive.sha256,
        size: archive.size,
        mime_type: 'application/pdf',
        signer_id: null,
        created_at: now,
      });
    }
    const { fieldName, genTime, tsa, levels } = archive?.summary ?? {};
    await appendAuditEvent(trx, deps.clock, contractTrail(contract.id), {
      action: 'completed',
      actor: systemActor,
      details: {
        signers: signers.filter((s) => s.role === 'signer').length,
        // The levels verification gives the final file: the trail says what verify says.
        ...(archive
          ? {
              fileVersion: archive.version,
              documentTimestamp: { fieldName, genTime, tsa },
              documentHash: `sha256:${archive.sha256}`,
              levels,
            }
          : {}),
      },
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
  await appendAuditEvent(trx, deps.clock, contractTrail(contract.id), {
    action: 'sent',
    actor: systemActor,
    details: { order: next, invited },
  });
  return 'signing';
}

/**
 * A contract signed by one of its signers: the contract's newest version, the signer's
 * placement, the contract's audit trail; a signature is the contract's next version and may
 * advance the turn or complete the contract; a refusal rejects the contract.
 */
export function contractSubject(
  deps: { clock: Clock },
  contract: ContractRow,
  signers: readonly ContractSignerRow[],
  signer: ContractSignerRow,
): SigningSubject & { contract: ContractRow; contractSigner: ContractSignerRow } {
  const audit = async (trx: Db, event: AuditEventInput) => {
    await appendAuditEvent(trx, deps.clock, contractTrail(contract.id), event);
  };
  return {
    kind: 'contract',
    contract,
    contractSigner: signer,
    tenantId: contract.tenant_id,
    signer: {
      name: signer.name,
      email: signer.email,
      phone: signer.phone,
      identityNumber: signer.identity_number,
      taxCode: signer.tax_code,
    },
    signerActor: signerActor(signer),
    summary: { id: contract.uuid, title: contract.title },
    sessionColumns: {
      contract_id: contract.id,
      signer_id: signer.id,
      task_id: null,
      user_id: null,
      file_id: null,
    },
    assertSignable: async (db, now) => {
      assertContractSigning((await contractById(db, contract.id))!, now);
    },
    newestFile: async (db) => {
      const newest = (await fileVersion(db, contract.id, 'newest'))!;
      return { sha256: newest.sha256, version: newest.version };
    },
    signatureBox: (lastPage) => signatureBox(signers, signer, lastPage),
    reason: (method, locale) => messagesOf(locale).pdf.reason.contract[method],
    audit,
    mailOtp: (trx, mailDeps, otp) =>
      queueContractMail(trx, mailDeps, contract, 'otp', signer, { otp }),
    isLastSignature: async (db) =>
      (await signersOf(db, contract.id)).every(
        (other) => other.role !== 'signer' || other.status === 'signed' || other.id === signer.id,
      ),
    commitSignature: async (trx, commitDeps, { signed, method, source }) => {
      const at = commitDeps.clock.now().toISOString();
      await insertFileVersion(trx, {
        contract_id: contract.id,
        version: source.version + 1,
        kind: 'signature',
        sha256: signed.sha256,
        size: signed.size,
        mime_type: 'application/pdf',
        signer_id: signer.id,
        created_at: at,
      });
      await updateSigner(trx, signer.id, { status: 'signed', signed_at: at, method });
      const current = (await contractById(trx, contract.id))!;
      const archive = signed.archived && { ...signed.archived, version: source.version + 2 };
      const status = await advanceTurn(
        trx,
        commitDeps,
        current,
        { ...signer, status: 'signed' },
        archive,
      );
      return { contractStatus: status };
    },
    reject: async (trx, rejectDeps, reason, { actor, origin }) => {
      const now = rejectDeps.clock.now();
      const at = now.toISOString();
      const current = (await contractById(trx, contract.id))!;
      assertContractSigning(current, now);
      await transitionContract(trx, contract.id, ['signing'], {
        status: 'rejected',
        rejected_at: at,
        ended_at: at,
        updated_at: at,
      });
      await updateSigner(trx, signer.id, { status: 'rejected' });
      await audit(trx, {
        action: 'rejected',
        actor,
        origin,
        details: { signer: signer.email, signerName: signer.name, reason },
      });
      const creator = await creatorOf(trx, current.created_by_user_id);
      if (creator) {
        await queueContractMail(trx, rejectDeps, current, 'rejected', creator, {
          reason,
          senderName: signer.name,
        });
      }
      return { contractId: contract.uuid, contractStatus: 'rejected' };
    },
  };
}
