import crypto from 'node:crypto';
import type { AppDeps } from '../context';
import type { Db } from '../db/database';
import { type ContractMailKind, contractMail, queueMail } from '../notify';
import { type ContractRow, type ContractSignerRow, updateSigner } from './queries';

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
