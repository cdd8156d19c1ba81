import { messagesOf } from '@esign/shared/messages';
import { appendAuditEvent } from '../audit/chain';
import { type AuditEventInput, contractTrail } from '../audit/subject';
import { queueContractMail } from '../contracts/invitations';
import {
  assertContractSigning,
  signerActor,
  signerRejected,
  signerSigned,
} from '../contracts/lifecycle';
import {
  type ContractRow,
  type ContractSignerRow,
  contractById,
  fileVersion,
  signersOf,
} from '../contracts/queries';
import type { Db } from '../db/database';
import type { Clock } from '../platform/clock';
import { signatureBox } from './rules';
import type { SigningSubject } from './subject';

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
      const current = (await contractById(trx, contract.id))!;
      const contractStatus = await signerSigned(trx, commitDeps, current, signer, {
        sha256: signed.sha256,
        size: signed.size,
        method,
        sourceVersion: source.version,
        archived: signed.archived,
      });
      return { contractStatus };
    },
    reject: async (trx, rejectDeps, reason, by) => {
      const current = (await contractById(trx, contract.id))!;
      await signerRejected(trx, rejectDeps, current, signer, reason, by);
      return { contractId: contract.uuid, contractStatus: 'rejected' };
    },
  };
}
