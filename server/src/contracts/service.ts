import fs from 'node:fs/promises';
import { messagesOf } from '@esign/shared/messages';
import { appendAuditEvent } from '../audit/chain';
import { auditEventsOf } from '../audit/queries';
import { eventView } from '../audit/render';
import { type AuditOrigin, contractTrail } from '../audit/subject';
import { findUserById } from '../auth/queries';
import type { AppDeps } from '../context';
import { inTransaction } from '../db/database';
import { DomainError } from '../errors/domainError';
import { fileResponse, temporaryFileResponse } from '../files/download';
import { type ContractCaller, contractInScope } from './access';
import { auditPdf } from './auditPdf';
import { contractFileUrl } from './create';
import { existingSignaturesOf } from './existingSignatures';
import { invitationTokenHash } from './invitations';
import { cancelWithReason, sendForSigning } from './lifecycle';
import {
  type ContractRow,
  type ContractSignerRow,
  contractById,
  contractTypeById,
  fileVersion,
  listContracts,
  signerByInvitation,
  signersOf,
  signersOfMany,
} from './queries';
import type { ContractListQuery, DownloadType } from './schemas';
import { contractPageSize } from './schemas';
import { searchKeyOf } from './search';

function signerView(signer: ContractSignerRow) {
  return {
    name: signer.name,
    email: signer.email,
    phone: signer.phone,
    role: signer.role,
    order: signer.signing_order,
    status: signer.status,
    signedAt: signer.signed_at,
    method: signer.method,
    identityNumber: signer.identity_number,
    taxCode: signer.tax_code,
  };
}

function listItem(contract: ContractRow, signers: ContractSignerRow[]) {
  return {
    id: contract.uuid,
    title: contract.title,
    status: contract.status,
    createdAt: contract.created_at,
    expiredAt: contract.expired_at,
    signers: signers.map(signerView),
  };
}

/** GET /api/contracts: one page in the caller's scope, with the spec's `meta`. */
export async function listContractPage(
  deps: Pick<AppDeps, 'db'>,
  caller: ContractCaller,
  query: ContractListQuery,
) {
  const page = query.page ?? 1;
  const limit = query.limit ?? contractPageSize.default;
  const { total, rows } = await listContracts(deps.db, caller.scope, {
    page,
    limit,
    status: query.status,
    searchKey: query.search === undefined ? undefined : searchKeyOf(query.search),
    fromDate: query.fromDate,
    toDate: query.toDate,
    sortBy: query.sortBy,
    order: query.order,
  });
  const signers = await signersOfMany(
    deps.db,
    rows.map((row) => row.id),
  );
  return {
    data: rows.map((row) =>
      listItem(
        row,
        signers.filter((s) => s.contract_id === row.id),
      ),
    ),
    meta: { page, limit, total, totalPages: Math.ceil(total / limit) },
  };
}

/**
 * GET /api/contracts/{id}: the contract with its signers and audit trail. The read itself is
 * recorded (`viewed`, by the caller) before the trail is read, so the answer shows it.
 */
export async function contractDetail(deps: AppDeps, caller: ContractCaller, id: string) {
  const found = await contractInScope(deps, caller, id);
  await inTransaction(deps.db, (trx) =>
    appendAuditEvent(trx, deps.clock, contractTrail(found.id), {
      action: 'viewed',
      actor: caller.auditActor,
      origin: caller.origin,
    }),
  );
  const contract = (await contractById(deps.db, found.id))!;
  const [signers, events, type, creator, newest] = await Promise.all([
    signersOf(deps.db, contract.id),
    auditEventsOf(deps.db, contractTrail(contract.id)),
    contractTypeById(deps.db, contract.contract_type_id),
    findUserById(deps.db, contract.created_by_user_id),
    fileVersion(deps.db, contract.id, 'newest'),
  ]);
  return {
    ...listItem(contract, signers),
    description: contract.description,
    contractType: { id: type!.type_number, name: type!.name },
    fileName: contract.source_name,
    fileUrl: contractFileUrl(deps, contract.uuid, 'original'),
    signedFileUrl:
      newest && newest.version > 1 ? contractFileUrl(deps, contract.uuid, 'signed') : null,
    createdBy: {
      name: creator?.name?.trim() || creator?.username || '',
      email: creator?.email ?? null,
    },
    sentAt: contract.sent_at,
    completedAt: contract.completed_at,
    rejectedAt: contract.rejected_at,
    cancelledAt: contract.cancelled_at,
    cancelReason: contract.cancel_reason,
    existingSignatures: existingSignaturesOf(contract.existing_signatures),
    auditTrail: events.map(eventView),
  };
}

/**
 * POST /api/contracts/{id}/send: draft → signing (lifecycle.ts). The first signers are invited
 * by e-mail in the same transaction, so the state and the e-mails commit together.
 */
export async function sendContract(deps: AppDeps, caller: ContractCaller, id: string) {
  const found = await contractInScope(deps, caller, id);
  return inTransaction(deps.db, async (trx) => {
    // Read again under the write lock: a concurrent send or cancel has committed or not.
    const contract = (await contractById(trx, found.id))!;
    const sentAt = await sendForSigning(trx, deps, contract, {
      actor: caller.auditActor,
      origin: caller.origin,
    });
    return { id: contract.uuid, status: 'signing' as const, sentAt };
  });
}

/**
 * DELETE /api/contracts/{id}: draft or signing → cancelled with the reason (lifecycle.ts).
 * Signers already invited are told their link no longer works.
 */
export async function cancelContract(
  deps: AppDeps,
  caller: ContractCaller,
  id: string,
  reason: string,
) {
  const found = await contractInScope(deps, caller, id);
  return inTransaction(deps.db, async (trx) => {
    const contract = (await contractById(trx, found.id))!;
    const cancelledAt = await cancelWithReason(trx, deps, contract, reason, {
      actor: caller.auditActor,
      origin: caller.origin,
    });
    return { id: contract.uuid, status: 'cancelled' as const, cancelledAt, reason };
  });
}

/** Download names: the title, and for the signed file a suffix in the service's language. */
function downloadTitle(deps: AppDeps, type: Exclude<DownloadType, 'audit'>, title: string): string {
  return type === 'original'
    ? title
    : messagesOf(deps.config.notify.locale).server.downloadName.signedContract(title);
}

/**
 * GET /api/contracts/{id}/download: streams the original, the newest signed version (404
 * SIGNED_FILE_NOT_AVAILABLE before the first signature) or the audit-trail PDF, and records
 * the download in the trail.
 */
export async function downloadContract(
  deps: AppDeps,
  caller: ContractCaller,
  id: string,
  type: DownloadType,
): Promise<Response> {
  const contract = await contractInScope(deps, caller, id);
  const record = () =>
    inTransaction(deps.db, (trx) =>
      appendAuditEvent(trx, deps.clock, contractTrail(contract.id), {
        action: 'downloaded',
        actor: caller.auditActor,
        origin: caller.origin,
        details: { type },
      }),
    );
  if (type === 'audit') {
    const sealed = await auditPdf(deps, contract);
    try {
      await record();
      return await temporaryFileResponse(sealed, {
        mimeType: 'application/pdf',
        title: messagesOf(deps.config.notify.locale).server.downloadName.contractAuditTrail(
          contract.title,
        ),
      });
    } catch (error) {
      await fs.rm(sealed, { force: true });
      throw error;
    }
  }
  const version = await fileVersion(
    deps.db,
    contract.id,
    type === 'original' ? 'original' : 'newest',
  );
  if (!version || (type === 'signed' && version.version === 1)) {
    throw new DomainError(
      'SIGNED_FILE_NOT_AVAILABLE',
      'The contract has no signature yet; download type=original instead',
      { field: 'type' },
    );
  }
  await record();
  return fileResponse(
    deps,
    {
      sha256: version.sha256,
      mimeType: version.mime_type,
      title: downloadTitle(deps, type, contract.title),
    },
    { redirect: true },
  );
}

/**
 * Resolves the token of a signing-page link (`/ky-so/{token}`): the signer and the contract,
 * while the contract is being signed and the deadline has not passed. 404 INVITATION_NOT_FOUND
 * for an unknown token, 410 INVITATION_EXPIRED once it no longer opens anything.
 */
export async function resolveInvitation(deps: Pick<AppDeps, 'db' | 'clock'>, token: string) {
  const signer = await signerByInvitation(deps.db, invitationTokenHash(token));
  if (!signer) throw new DomainError('INVITATION_NOT_FOUND', 'Unknown signing link');
  const contract = (await contractById(deps.db, signer.contract_id))!;
  const now = deps.clock.now().toISOString();
  if (contract.status !== 'signing' || (signer.invitation_expires_at ?? '') <= now) {
    throw new DomainError(
      'INVITATION_EXPIRED',
      `The signing link no longer works: the contract is ${contract.status}`,
    );
  }
  return { contract, signer };
}

/** {@link resolveInvitation} for the signing page, recording `viewed` by that signer. */
export async function openInvitation(deps: AppDeps, token: string, origin: AuditOrigin) {
  const { contract, signer } = await resolveInvitation(deps, token);
  await inTransaction(deps.db, (trx) =>
    appendAuditEvent(trx, deps.clock, contractTrail(contract.id), {
      action: 'viewed',
      actor: { kind: 'signer', signerId: signer.id, name: `${signer.name} <${signer.email}>` },
      origin,
      details: { via: 'invitation' },
    }),
  );
  return { contract, signer };
}
