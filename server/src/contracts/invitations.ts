import crypto from 'node:crypto';
import { appendAuditEvent } from '../audit/chain';
import { contractTrail } from '../audit/subject';
import type { AppDeps } from '../context';
import { type Db, inTransaction } from '../db/database';
import { DomainError } from '../errors/domainError';
import { type ContractMailKind, contractMail, queueMail } from '../notify';
import { type ContractCaller, contractInScope } from './access';
import {
  type ContractRow,
  type ContractSignerRow,
  contractById,
  signersOf,
  updateSigner,
} from './queries';

type MailDeps = Pick<AppDeps, 'db' | 'config' | 'clock' | 'secrets'>;

/** The signing page of an invitation (the web app's `/ky-so/{id}` path, spec 01). */
export function invitationLink(deps: Pick<AppDeps, 'config'>, token: string): string {
  return `${deps.config.appUrl}/ky-so/${token}`;
}

/** Tokens are stored only as their SHA-256, so a copied database opens no signing page. */
export function invitationTokenHash(token: string): string {
  return crypto.createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Queues one contract e-mail inside the caller's transaction. */
export async function queueContractMail(
  trx: Db,
  deps: MailDeps,
  contract: ContractRow,
  kind: ContractMailKind,
  to: { name: string; email: string },
  extra: {
    link?: string | null;
    senderName?: string | null;
    reason?: string | null;
    signedBy?: string | null;
    otp?: string | null;
  } = {},
): Promise<void> {
  const options = { locale: deps.config.notify.locale, serviceName: deps.config.serviceName };
  const mail = contractMail(
    kind,
    {
      recipientName: to.name,
      contractId: contract.uuid,
      contractTitle: contract.title,
      senderName: extra.senderName ?? null,
      link: extra.link ?? null,
      deadline: kind === 'invitation' || kind === 'viewing' ? contract.expired_at : null,
      reason: extra.reason ?? null,
      signedBy: extra.signedBy ?? null,
      otp: extra.otp ?? null,
    },
    options,
  );
  await queueMail(trx, deps, {
    tenantId: contract.tenant_id,
    kind: `contract_${kind}`,
    to: to.email,
    toName: to.name,
    ...mail,
  });
}

/**
 * Invites signers (or viewers) whose turn has come, inside the caller's transaction: each gets a
 * fresh single-purpose token valid until the contract's deadline, status `invited`, and an
 * e-mail with the link to the signing page. The signing sessions call this for the next order
 * when a turn completes. Returns the e-mail addresses invited.
 */
export async function inviteSigners(
  trx: Db,
  deps: MailDeps,
  contract: ContractRow,
  signers: readonly ContractSignerRow[],
  senderName: string | null,
): Promise<string[]> {
  const now = deps.clock.now().toISOString();
  for (const signer of signers) {
    const token = crypto.randomBytes(32).toString('base64url');
    await updateSigner(trx, signer.id, {
      status: 'invited',
      invited_at: now,
      invitation_token_hash: invitationTokenHash(token),
      invitation_expires_at: contract.expired_at,
    });
    await queueContractMail(
      trx,
      deps,
      contract,
      signer.role === 'viewer' ? 'viewing' : 'invitation',
      signer,
      { link: invitationLink(deps, token), senderName },
    );
  }
  return signers.map((signer) => signer.email);
}

/** The signers whose turn comes first: every `signer` of the lowest order, and every viewer. */
export function firstTurn(signers: readonly ContractSignerRow[]): ContractSignerRow[] {
  const orders = signers.filter((s) => s.role === 'signer').map((s) => s.signing_order);
  const first = Math.min(...orders);
  return signers.filter((s) => s.role === 'viewer' || s.signing_order === first);
}

/**
 * The shortest time between two invitations of one signer: a resend is for a lost or buried
 * e-mail, never a way to flood a mailbox.
 */
export const resendIntervalSeconds = 5 * 60;

/**
 * When the invitation of `signer` may be sent again: never (null) unless the contract is being
 * signed before its deadline and the signer was invited (their turn, or a viewer); otherwise
 * `resendIntervalSeconds` after their last invitation (possibly already past).
 */
export function resendAvailableAt(
  contract: Pick<ContractRow, 'status' | 'expired_at'>,
  signer: Pick<ContractSignerRow, 'status' | 'invited_at'>,
  now: Date,
): Date | null {
  if (contract.status !== 'signing' || contract.expired_at <= now.toISOString()) return null;
  if (signer.status !== 'invited' || signer.invited_at === null) return null;
  return new Date(Date.parse(signer.invited_at) + resendIntervalSeconds * 1000);
}

/**
 * Sends a signer's invitation again: a fresh link (the previous one stops working, so only the
 * newest e-mail opens the signing page) and the same e-mail as the first time, recorded in the
 * trail as `invitation_resent`. Only while the contract is being signed and the signer invited
 * (409 SIGNER_NOT_INVITED), and not sooner than `resendIntervalSeconds` after the last
 * invitation (429 INVITATION_RESENT_RECENTLY with Retry-After). `position` is the signer's
 * place in the contract's `signers` (0-based).
 */
export async function resendInvitation(
  deps: AppDeps,
  caller: ContractCaller,
  id: string,
  position: number,
): Promise<{ id: string; signer: string; resentAt: string }> {
  const found = await contractInScope(deps, caller, id);
  return inTransaction(deps.db, async (trx) => {
    // Read again under the write lock: a concurrent turn, cancel or resend has committed or not.
    const contract = (await contractById(trx, found.id))!;
    const signer = (await signersOf(trx, contract.id)).find((s) => s.position === position);
    if (!signer) {
      throw new DomainError('SIGNER_NOT_FOUND', `The contract has no signer ${position}`, {
        field: 'signer',
      });
    }
    const now = deps.clock.now();
    const availableAt = resendAvailableAt(contract, signer, now);
    if (availableAt === null) {
      throw new DomainError(
        'SIGNER_NOT_INVITED',
        `No invitation to send again: the contract is ${contract.status} and the signer ${signer.status}`,
        { field: 'signer' },
      );
    }
    if (availableAt > now) {
      const seconds = Math.ceil((availableAt.getTime() - now.getTime()) / 1000);
      throw new DomainError(
        'INVITATION_RESENT_RECENTLY',
        `The signer was invited less than ${resendIntervalSeconds / 60} minutes ago; try again in ${seconds} s`,
        { field: 'signer', retryAfterSeconds: seconds },
      );
    }
    await inviteSigners(trx, deps, contract, [signer], caller.auditActor.name);
    await appendAuditEvent(trx, deps.clock, contractTrail(contract.id), {
      action: 'invitation_resent',
      actor: caller.auditActor,
      origin: caller.origin,
      details: { signer: signer.email, signerName: signer.name },
    });
    return { id: contract.uuid, signer: signer.email, resentAt: now.toISOString() };
  });
}
