import type { AppDeps } from '../context';
import type { ContractCaller } from '../contracts/access';
import { contractInScope } from '../contracts/access';
import { type AuditOrigin, appendAuditEvent } from '../contracts/audit';
import { contractById, fileVersion, signersOf } from '../contracts/queries';
import { emailKey } from '../contracts/schemas';
import { inTransaction } from '../db/database';
import type { SigningMethod } from '../db/schema';
import { findPreparation } from '../signing/finalize';
import { signerActor } from './access';
import { issueAgentTicket, signingPageOrigin, ticketOrigin } from './agentTickets';
import { sessionErrors } from './errors';
import { enrolledCloudKey } from './keys';
import { dropPreparation, prepareForSigner } from './prepare';
import {
  insertSession,
  openSessionOf,
  sessionById,
  sessionByLinkHash,
  updateSessionIf,
} from './queries';
import {
  assertContractSigning,
  assertSessionOpen,
  blockingOrder,
  sessionLifetimeMs,
} from './rules';
import { bearerHash, newBearer } from './secrets';

export interface InitiateInput {
  contractId: string;
  signerEmail: string;
  signingMethod: SigningMethod;
  /** usb_token: the page origin that will talk to the desktop agent (default the signing page). */
  origin?: string | undefined;
}

/** The page the signing link opens (the web app's signing screen for one session). */
export function signingLink(deps: Pick<AppDeps, 'config'>, token: string): string {
  return `${deps.config.appUrl}/ky-so/phien/${token}`;
}

/** The TSA a token client stamps with: TSA_URL, else this server's development TSA. */
export function tsaUrlOf(deps: Pick<AppDeps, 'config'>): string {
  return deps.config.tsa.url ?? `${deps.config.publicUrl}/api/dev/tsa`;
}

/** What a usb_token page hands the agent: the TSA and the server's signing ticket. */
async function tokenSigning(
  deps: AppDeps,
  subject: { origin: string; sessionId: string; contractHash: string; expiresAt: Date },
): Promise<{ tsaUrl: string; ticket: string }> {
  const tsaUrl = tsaUrlOf(deps);
  return { tsaUrl, ticket: await issueAgentTicket(deps, { ...subject, tsaUrl }) };
}

/**
 * POST /api/signing/initiate: opens a session for the signer whose turn it is, on the newest
 * version of the contract, with a single-use signing link; supersedes the signer's open session
 * (its preparation abandoned). Lives 30 minutes, never past the contract's deadline.
 */
export async function initiateSession(deps: AppDeps, caller: ContractCaller, input: InitiateInput) {
  const contract = await contractInScope(deps, caller, input.contractId);
  const now = deps.clock.now();
  assertContractSigning(contract, now);
  const signers = await signersOf(deps.db, contract.id);
  const signer = signers.find((s) => s.email_key === emailKey(input.signerEmail));
  if (!signer) throw sessionErrors.signerNotFound(input.signerEmail);
  if (signer.role !== 'signer') throw sessionErrors.notASigner();
  if (signer.status === 'signed') throw sessionErrors.alreadySigned();
  const waitingFor = blockingOrder(signers, signer);
  if (waitingFor !== null) throw sessionErrors.notYourTurn(waitingFor);
  if (input.signingMethod === 'cloud_hsm') await enrolledCloudKey(deps, contract, signer, false);
  const agentOrigin =
    input.signingMethod === 'usb_token'
      ? await ticketOrigin(deps, contract.tenant_id, input.origin)
      : undefined;

  const expiresAt = new Date(
    Math.min(now.getTime() + sessionLifetimeMs, new Date(contract.expired_at).getTime()),
  );
  const version = (await fileVersion(deps.db, contract.id, 'newest'))!;
  const preparation = await prepareForSigner(deps, {
    contract,
    signers,
    signer,
    method: input.signingMethod,
    version,
    expiresAt,
  });
  const sessionId = newBearer(deps.secrets).token;
  const link = newBearer(deps.secrets);
  let superseded: { preparationId: number } | undefined;
  try {
    await inTransaction(deps.db, async (trx) => {
      const current = (await contractById(trx, contract.id))!;
      assertContractSigning(current, deps.clock.now());
      const open = await openSessionOf(trx, signer.id);
      if (open) {
        await updateSessionIf(trx, open.id, 'open', {
          state: 'superseded',
          ended_at: now.toISOString(),
        });
        superseded = { preparationId: open.preparation_id };
      }
      await insertSession(trx, {
        public_id: sessionId,
        tenant_id: contract.tenant_id,
        contract_id: contract.id,
        signer_id: signer.id,
        method: input.signingMethod,
        preparation_id: preparation.id,
        source_version: version.version,
        state: 'open',
        created_at: now.toISOString(),
        expires_at: expiresAt.toISOString(),
        link_token_hash: link.hash,
        link_expires_at: expiresAt.toISOString(),
      });
      await appendAuditEvent(trx, deps.clock, contract.id, {
        action: 'session_initiated',
        actor: caller.auditActor,
        origin: caller.origin,
        details: {
          signer: signer.email,
          signerName: signer.name,
          method: input.signingMethod,
          contractHash: preparation.contractHash,
          fileVersion: version.version,
          expiresAt: expiresAt.toISOString(),
          supersededSession: open !== undefined,
        },
      });
    });
  } catch (error) {
    await dropPreparation(deps, preparation.id, contract.tenant_id);
    throw error;
  }
  if (superseded) await dropPreparation(deps, superseded.preparationId, contract.tenant_id);
  return {
    sessionId,
    contractHash: preparation.contractHash,
    expiresAt: expiresAt.toISOString(),
    signingUrl: signingLink(deps, link.token),
    ...(agentOrigin !== undefined
      ? await tokenSigning(deps, {
          origin: agentOrigin,
          sessionId,
          contractHash: preparation.contractHash,
          expiresAt,
        })
      : {}),
  };
}

/**
 * POST /api/signing/page-credential: the signing page turns the token of its link into a page
 * credential for this session's steps (sent as X-Signing-Token), once. Records `viewed` by the
 * signer. 404 SIGNING_LINK_NOT_FOUND, 409 SIGNING_LINK_USED, 410 SIGNING_LINK_EXPIRED; a
 * session or contract that can no longer be signed answers as the steps do.
 */
export async function exchangeSigningLink(deps: AppDeps, token: string, origin: AuditOrigin) {
  const found = await sessionByLinkHash(deps.db, bearerHash(deps.secrets, token));
  if (!found) throw sessionErrors.linkNotFound();
  const page = newBearer(deps.secrets);
  const session = await inTransaction(deps.db, async (trx) => {
    const session = (await sessionById(trx, found.id))!;
    const now = deps.clock.now();
    if (session.link_used_at !== null) throw sessionErrors.linkUsed();
    if (session.link_expires_at <= now.toISOString()) {
      throw sessionErrors.linkExpired(session.link_expires_at);
    }
    const contract = (await contractById(trx, session.contract_id))!;
    assertContractSigning(contract, now);
    assertSessionOpen(session, now);
    await updateSessionIf(trx, session.id, 'open', {
      link_used_at: now.toISOString(),
      page_token_hash: page.hash,
    });
    const signer = (await signersOf(trx, contract.id)).find((s) => s.id === session.signer_id)!;
    await appendAuditEvent(trx, deps.clock, contract.id, {
      action: 'viewed',
      actor: signerActor(signer),
      origin,
      details: { via: 'signing_link', method: session.method },
    });
    return { session, contract, signer };
  });
  const preparation = await findPreparation(
    deps,
    session.session.preparation_id,
    session.contract.tenant_id,
  );
  return {
    sessionId: session.session.public_id,
    pageCredential: page.token,
    expiresAt: session.session.expires_at,
    signingMethod: session.session.method,
    contractHash: preparation.contractHash,
    contract: { id: session.contract.uuid, title: session.contract.title },
    signer: { name: session.signer.name, email: session.signer.email },
    ...(session.session.method === 'usb_token'
      ? await tokenSigning(deps, {
          origin: signingPageOrigin(deps),
          sessionId: session.session.public_id,
          contractHash: preparation.contractHash,
          expiresAt: new Date(session.session.expires_at),
        })
      : {}),
  };
}
