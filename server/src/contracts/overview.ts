import type { AppDeps } from '../context';
import { fileResponse } from '../files/download';
import { type ContractCaller, contractInScope } from './access';
import { resendAvailableAt } from './invitations';
import {
  contractsAwaitingOthers,
  countContractsAwaitingOthers,
  fileVersion,
  type recentContractActions,
  recentContractEventsBy,
  signersOf,
  signersOfMany,
} from './queries';
import { contractDetail } from './service';

type AuditEntry = Awaited<ReturnType<typeof contractDetail>>['auditTrail'][number];

/** A text fact of an event's details, or null. */
function detailText(event: AuditEntry, key: string): string | null {
  const value = event.details[key];
  return typeof value === 'string' ? value : null;
}

/** The newest event of `action` naming `email` as its signer. */
function signerEvent(trail: AuditEntry[], action: string, email: string): AuditEntry | undefined {
  return trail.findLast(
    (event) => event.action === action && detailText(event, 'signer') === email,
  );
}

/**
 * What the web app's contract page shows: the API's contract detail (the read recorded as
 * `viewed`, as the API records it) plus what a person checks on screen: the SHA-256 of the
 * original and of the newest file, the audit trail's head, and for each signer in signing order
 * its place, the certificate subject it signed with, the reason it gave for a refusal, and from
 * when its invitation may be sent again.
 */
export async function contractOverview(deps: AppDeps, caller: ContractCaller, id: string) {
  const detail = await contractDetail(deps, caller, id);
  const contract = await contractInScope(deps, caller, id);
  const [rows, original, newest] = await Promise.all([
    signersOf(deps.db, contract.id),
    fileVersion(deps.db, contract.id, 'original'),
    fileVersion(deps.db, contract.id, 'newest'),
  ]);
  const now = deps.clock.now();
  const signers = rows.map((row) => {
    const signed =
      row.status === 'signed' ? signerEvent(detail.auditTrail, 'signed', row.email) : undefined;
    const rejected =
      row.status === 'rejected' ? signerEvent(detail.auditTrail, 'rejected', row.email) : undefined;
    return {
      position: row.position,
      order: row.signing_order,
      role: row.role,
      name: row.name,
      email: row.email,
      status: row.status,
      invitedAt: row.invited_at,
      signedAt: row.signed_at,
      method: row.method,
      certificateSubject: signed ? detailText(signed, 'certificateSubject') : null,
      rejectedAt: rejected?.at ?? null,
      rejectReason: rejected ? detailText(rejected, 'reason') : null,
      resendAvailableAt: resendAvailableAt(contract, row, now)?.toISOString() ?? null,
    };
  });
  return {
    ...detail,
    signers,
    originalSha256: original?.sha256 ?? null,
    newestSha256: newest?.sha256 ?? null,
    newestVersion: newest?.version ?? null,
    auditHead: contract.audit_head,
  };
}

export type ContractOverview = Awaited<ReturnType<typeof contractOverview>>;

/**
 * The newest file of a contract, for the web app's inline preview: the same scope check as the
 * download, not recorded as a download (the page showing it recorded `viewed`).
 */
export async function previewContract(
  deps: AppDeps,
  caller: ContractCaller,
  id: string,
): Promise<Response> {
  const contract = await contractInScope(deps, caller, id);
  const newest = (await fileVersion(deps.db, contract.id, 'newest'))!;
  return fileResponse(deps, {
    sha256: newest.sha256,
    mimeType: newest.mime_type,
    title: contract.title,
  });
}

/**
 * The contracts the caller created that wait for others (being signed), closest deadline first,
 * at most `limit`, with how many there are: for each, how many signers signed of how many, and
 * whose turn it is.
 */
export async function contractsWaitingForOthers(
  deps: Pick<AppDeps, 'db'>,
  caller: ContractCaller,
  limit: number,
) {
  const owner = { tenantId: caller.scope.tenantId, userId: caller.actor.id };
  const { total } = await countContractsAwaitingOthers(deps.db, owner).executeTakeFirstOrThrow();
  const rows = await contractsAwaitingOthers(deps.db, owner, limit).execute();
  const signers = await signersOfMany(
    deps.db,
    rows.map((row) => row.id),
  );
  return {
    total: Number(total),
    items: rows.map((row) => {
      const own = signers.filter((s) => s.contract_id === row.id && s.role === 'signer');
      return {
        id: row.uuid,
        title: row.title,
        expiredAt: row.expired_at,
        sentAt: row.sent_at,
        signed: own.filter((s) => s.status === 'signed').length,
        signers: own.length,
        waitingFor: own.filter((s) => s.status === 'invited').map((s) => s.name),
      };
    }),
  };
}

/** The caller's own newest acts on contracts in their scope, at most `limit`. */
export async function recentContractActivity(
  deps: Pick<AppDeps, 'db'>,
  caller: ContractCaller,
  limit: number,
) {
  const rows = await recentContractEventsBy(
    deps.db,
    caller.actor.id,
    caller.scope,
    limit,
  ).execute();
  return rows.map((row) => ({
    action: row.action as (typeof recentContractActions)[number],
    at: row.at,
    contractId: row.uuid,
    title: row.title,
  }));
}
