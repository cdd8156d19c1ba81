import { appendAuditEvent } from '../audit/chain';
import { type AuditActor, type AuditOrigin, contractTrail, systemActor } from '../audit/subject';
import { findUserById } from '../auth/queries';
import type { AppDeps } from '../context';
import type { Db } from '../db/database';
import type { ContractStatus, SigningMethod } from '../db/schema';
import { DomainError } from '../errors/domainError';
import { firstTurn, inviteSigners, queueContractMail } from './invitations';
import {
  type ContractRow,
  type ContractSignerRow,
  insertFileVersion,
  signersOf,
  transitionContract,
  updateSigner,
} from './queries';

/**
 * The contract lifecycle: the one place where a contract changes state.
 *
 * ```
 * draft ──send──▶ signing ──last signature──▶ completed
 *   │               ├──── a signer declines ──▶ rejected
 *   ├──── cancel ───┴───────────────────────▶ cancelled
 *   └──── deadline ─┴───────────────────────▶ expired
 * ```
 *
 * Each transition is a function called inside the caller's transaction with the contract as
 * read under its write lock. It checks the state it starts from (one refusal, {@link wrongState},
 * with the transition's code), moves the row only from those states, records its audit event
 * and queues its e-mails in the same transaction. A signature that leaves signers pending keeps
 * the contract signing and invites the next order. Contracts emit no webhooks. The API
 * (contracts/service.ts), the deadline scheduler (contracts/expiry.ts), the signing sessions
 * (sessions/contractSubject.ts) and the web pages reach the states through here only.
 */

type LifecycleDeps = Pick<AppDeps, 'db' | 'config' | 'clock' | 'secrets'>;

/** Who moves the contract, for its audit trail. */
export interface ContractMover {
  actor: AuditActor;
  origin: AuditOrigin;
}

type Transition = 'send' | 'cancel' | 'complete' | 'reject' | 'expire';

/** The states each transition starts from and the state it ends in. */
const transitions = {
  send: { from: ['draft'], to: 'signing' },
  cancel: { from: ['draft', 'signing'], to: 'cancelled' },
  complete: { from: ['signing'], to: 'completed' },
  reject: { from: ['signing'], to: 'rejected' },
  expire: { from: ['draft', 'signing'], to: 'expired' },
} as const satisfies Record<Transition, { from: readonly ContractStatus[]; to: ContractStatus }>;

/** What a contract that is no longer being signed answers, by its state (409 with its code). */
export const contractStateCodes: Record<Exclude<ContractStatus, 'signing'>, string> = {
  draft: 'CONTRACT_NOT_SENT',
  completed: 'CONTRACT_COMPLETED',
  rejected: 'CONTRACT_REJECTED',
  expired: 'CONTRACT_EXPIRED',
  cancelled: 'CONTRACT_CANCELLED',
};

/**
 * The one wrong-state refusal (409): send answers CONTRACT_NOT_DRAFT, cancel
 * CONTRACT_NOT_CANCELLABLE, the transitions of a contract being signed the code of the state it
 * is in ({@link contractStateCodes}), CONTRACT_EXPIRED for one still `signing` past its deadline.
 * `details.code` is the state.
 */
function wrongState(transition: Transition, status: ContractStatus): DomainError {
  const detailCode = status.toUpperCase();
  switch (transition) {
    case 'send':
      return new DomainError('CONTRACT_NOT_DRAFT', `The contract is ${status}; it must be draft`, {
        detailCode,
      });
    case 'cancel':
      return new DomainError(
        'CONTRACT_NOT_CANCELLABLE',
        `The contract is ${status}; it must be draft or signing`,
        { detailCode },
      );
    default:
      if (status === 'signing') return wrongState(transition, 'expired');
      return new DomainError(contractStateCodes[status], `The contract is ${status}, not signing`, {
        detailCode,
      });
  }
}

function startsFrom(transition: Transition, contract: Pick<ContractRow, 'status'>): boolean {
  return (transitions[transition].from as readonly ContractStatus[]).includes(contract.status);
}

function assertStartsFrom(transition: Transition, contract: Pick<ContractRow, 'status'>): void {
  if (!startsFrom(transition, contract)) throw wrongState(transition, contract.status);
}

/**
 * Writes the transition with `values`, only from its starting states: a contract another
 * transaction moved first is refused as any wrong state is.
 */
async function move(
  trx: Db,
  transition: Transition,
  contract: ContractRow,
  values: Omit<Parameters<typeof transitionContract>[3], 'status'>,
): Promise<void> {
  const { from, to } = transitions[transition];
  if (!(await transitionContract(trx, contract.id, from, { ...values, status: to }))) {
    throw wrongState(transition, contract.status);
  }
}

/**
 * 409 with the contract's code unless it is being signed and its deadline has not passed: a
 * signature or a refusal may still happen. Asked before a session opens and in every step.
 */
export function assertContractSigning(
  contract: Pick<ContractRow, 'status' | 'expired_at'>,
  now: Date,
): void {
  assertStartsFrom('complete', contract);
  if (contract.expired_at <= now.toISOString()) throw wrongState('complete', 'expired');
}

/** The contract's creator as an e-mail recipient, when they have an address. */
async function creatorOf(trx: Db, contract: ContractRow) {
  const creator = await findUserById(trx, contract.created_by_user_id);
  if (!creator?.email) return null;
  return { name: creator.name?.trim() || creator.username, email: creator.email };
}

/** A contract signer as the audit trail names them. */
export function signerActor(signer: ContractSignerRow): AuditActor {
  return { kind: 'signer', signerId: signer.id, name: `${signer.name} <${signer.email}>` };
}

/**
 * send: draft → signing (422 CONTRACT_DEADLINE_PASSED once the deadline has passed). The first
 * turn is invited (every signer of the lowest order and every viewer), `sent` recorded.
 * Returns when it was sent.
 */
export async function sendForSigning(
  trx: Db,
  deps: LifecycleDeps,
  contract: ContractRow,
  by: ContractMover,
): Promise<string> {
  assertStartsFrom('send', contract);
  const now = deps.clock.now().toISOString();
  if (contract.expired_at <= now) {
    throw new DomainError(
      'CONTRACT_DEADLINE_PASSED',
      'The signing deadline (expiredAt) has passed',
    );
  }
  await move(trx, 'send', contract, { sent_at: now, updated_at: now });
  const sent = { ...contract, status: 'signing' as const, sent_at: now };
  const invited = await inviteSigners(
    trx,
    deps,
    sent,
    firstTurn(await signersOf(trx, contract.id)),
    by.actor.name,
  );
  await appendAuditEvent(trx, deps.clock, contractTrail(contract.id), {
    action: 'sent',
    actor: by.actor,
    origin: by.origin,
    details: { invited },
  });
  return now;
}

/**
 * cancel: draft or signing → cancelled, with the reason; signers already invited are told
 * their link no longer works. Returns when it was cancelled.
 */
export async function cancelWithReason(
  trx: Db,
  deps: LifecycleDeps,
  contract: ContractRow,
  reason: string,
  by: ContractMover,
): Promise<string> {
  assertStartsFrom('cancel', contract);
  const now = deps.clock.now().toISOString();
  await move(trx, 'cancel', contract, {
    cancelled_at: now,
    cancel_reason: reason,
    ended_at: now,
    updated_at: now,
  });
  for (const signer of await signersOf(trx, contract.id)) {
    if (signer.status !== 'invited') continue;
    await queueContractMail(trx, deps, contract, 'cancelled', signer, { reason });
  }
  await appendAuditEvent(trx, deps.clock, contractTrail(contract.id), {
    action: 'cancelled',
    actor: by.actor,
    origin: by.origin,
    details: { reason, from: contract.status },
  });
  return now;
}

/**
 * expire: draft or signing → expired once the deadline has passed (the deadline scheduler);
 * `expired` recorded and the creator e-mailed. Returns false, writing nothing, for a contract
 * no longer open or not yet due, so running twice expires it once.
 */
export async function expireAtDeadline(
  trx: Db,
  deps: LifecycleDeps,
  contract: ContractRow,
): Promise<boolean> {
  const now = deps.clock.now().toISOString();
  if (!startsFrom('expire', contract) || contract.expired_at > now) return false;
  await move(trx, 'expire', contract, { ended_at: contract.expired_at, updated_at: now });
  await appendAuditEvent(trx, deps.clock, contractTrail(contract.id), {
    action: 'expired',
    actor: systemActor,
    details: { deadline: contract.expired_at, from: contract.status },
  });
  const creator = await creatorOf(trx, contract);
  if (creator) await queueContractMail(trx, deps, contract, 'expired', creator);
  return true;
}

/** A signer's stored signature: the contract's next version, made on `sourceVersion`. */
export interface ContractSignature {
  sha256: string;
  size: number;
  method: SigningMethod;
  sourceVersion: number;
  /** The archive revision (B-LTA) made when this signature is the last one. */
  archived?:
    | {
        sha256: string;
        size: number;
        summary: {
          fieldName: string;
          genTime: string;
          tsa: string;
          levels: Record<string, string>;
        };
      }
    | undefined;
}

/**
 * A signer signed a signing contract: the signed file becomes its next version and the signer
 * `signed`. When no signer is left, complete: signing → completed, the archive revision (when
 * made) its last version, `completed` recorded and the creator e-mailed. When the signer's
 * order is done, the next order is invited, `sent` recorded and the creator told; parallel
 * signers of an order still signing change nothing. Returns the contract's status.
 */
export async function signerSigned(
  trx: Db,
  deps: LifecycleDeps,
  contract: ContractRow,
  signer: ContractSignerRow,
  signature: ContractSignature,
): Promise<'signing' | 'completed'> {
  assertStartsFrom('complete', contract);
  const now = deps.clock.now().toISOString();
  await insertFileVersion(trx, {
    contract_id: contract.id,
    version: signature.sourceVersion + 1,
    kind: 'signature',
    sha256: signature.sha256,
    size: signature.size,
    mime_type: 'application/pdf',
    signer_id: signer.id,
    created_at: now,
  });
  await updateSigner(trx, signer.id, {
    status: 'signed',
    signed_at: now,
    method: signature.method,
  });
  const signers = await signersOf(trx, contract.id);
  const pending = signers.filter((s) => s.role === 'signer' && s.status !== 'signed');
  const creator = await creatorOf(trx, contract);
  if (pending.length === 0) {
    await complete(trx, deps, contract, signers, signature, creator);
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

/** complete: signing → completed after the last signature ({@link signerSigned}). */
async function complete(
  trx: Db,
  deps: LifecycleDeps,
  contract: ContractRow,
  signers: readonly ContractSignerRow[],
  signature: ContractSignature,
  creator: { name: string; email: string } | null,
): Promise<void> {
  const now = deps.clock.now().toISOString();
  await move(trx, 'complete', contract, { completed_at: now, ended_at: now, updated_at: now });
  const archive = signature.archived && {
    ...signature.archived,
    version: signature.sourceVersion + 2,
  };
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
}

/**
 * reject: signing → rejected when a signer declines before the deadline (409 with the
 * contract's code otherwise); the signer `rejected`, `rejected` recorded with the reason, the
 * creator e-mailed.
 */
export async function signerRejected(
  trx: Db,
  deps: LifecycleDeps,
  contract: ContractRow,
  signer: ContractSignerRow,
  reason: string,
  by: ContractMover,
): Promise<void> {
  const now = deps.clock.now();
  assertContractSigning(contract, now);
  const at = now.toISOString();
  await move(trx, 'reject', contract, { rejected_at: at, ended_at: at, updated_at: at });
  await updateSigner(trx, signer.id, { status: 'rejected' });
  await appendAuditEvent(trx, deps.clock, contractTrail(contract.id), {
    action: 'rejected',
    actor: by.actor,
    origin: by.origin,
    details: { signer: signer.email, signerName: signer.name, reason },
  });
  const creator = await creatorOf(trx, contract);
  if (creator) {
    await queueContractMail(trx, deps, contract, 'rejected', creator, {
      reason,
      senderName: signer.name,
    });
  }
}
