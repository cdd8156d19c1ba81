import type { AuditActor, AuditOrigin } from '../audit/subject';
import type { AppDeps } from '../context';
import type { ContractCaller } from '../contracts/access';
import { contractInScope } from '../contracts/access';
import { assertContractSigning } from '../contracts/lifecycle';
import { type ContractRow, type ContractSignerRow, signersOf } from '../contracts/queries';
import { emailKey } from '../contracts/schemas';
import { inTransaction } from '../db/database';
import type { SigningMethod } from '../db/schema';
import { findPreparation } from '../signatures';
import { bindIdentity } from '../signing/certificates/identity';
import { certifiedKey } from '../signing/keys/signingKey';
import { issueAgentTicket, signingPageOrigin, ticketOrigin } from './agentTickets';
import { contractSubject } from './contractSubject';
import { sessionErrors } from './errors';
import { enrolledCloudKey } from './keys';
import { dropPreparation, expectedSigner, prepareForSigner } from './prepare';
import {
  insertSession,
  openSessionOf,
  sessionById,
  sessionByLinkHash,
  spendSigningLink,
  updateSessionIf,
} from './queries';
import { assertSessionOpen, blockingOrder, sessionLifetimeMs } from './rules';
import { bearerHash, newBearer } from './secrets';
import type { SigningSubject } from './subject';
import { subjectOfSession } from './subjects';
import { taskSubject } from './taskSubject';

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
export async function tokenSigning(
  deps: AppDeps,
  subject: { origin: string; sessionId: string; contractHash: string; expiresAt: Date },
): Promise<{ tsaUrl: string; ticket: string }> {
  const tsaUrl = tsaUrlOf(deps);
  return { tsaUrl, ticket: await issueAgentTicket(deps, { ...subject, tsaUrl }) };
}

/**
 * Opens a session on `subject` for `method`: the revision prepared from the subject's newest
 * file, a single-use signing link, the open session of the same signer superseded (its
 * preparation abandoned). Lives 30 minutes, never past `deadline`.
 */
async function openSession(
  deps: AppDeps,
  subject: SigningSubject,
  method: SigningMethod,
  by: { actor: AuditActor; origin: AuditOrigin },
  deadline: Date | null,
  requestedAgentOrigin?: string,
) {
  const now = deps.clock.now();
  if (method === 'cloud_hsm') {
    // An enrolled key's certificate must name the signer: refused before anything is prepared.
    const key = await enrolledCloudKey(deps, subject, false);
    if (key) bindIdentity(expectedSigner(subject), certifiedKey(key).chain[0]!);
  }
  // Checked before anything is prepared: an unregistered origin changes nothing.
  const agentOrigin =
    method === 'usb_token'
      ? await ticketOrigin(deps, subject.tenantId, requestedAgentOrigin)
      : undefined;
  const lifetimeEnd = now.getTime() + sessionLifetimeMs;
  const expiresAt = new Date(deadline ? Math.min(lifetimeEnd, deadline.getTime()) : lifetimeEnd);
  const version = await subject.newestFile(deps.db);
  const preparation = await prepareForSigner(deps, { subject, method, version, expiresAt });
  const sessionId = newBearer(deps.secrets).token;
  const link = newBearer(deps.secrets);
  let superseded: { preparationId: number } | undefined;
  try {
    await inTransaction(deps.db, async (trx) => {
      await subject.assertSignable(trx, deps.clock.now());
      const open = await openSessionOf(trx, subject.sessionColumns);
      if (open) {
        await updateSessionIf(trx, open.id, 'open', {
          state: 'superseded',
          ended_at: now.toISOString(),
        });
        superseded = { preparationId: open.preparation_id };
      }
      await insertSession(trx, {
        public_id: sessionId,
        tenant_id: subject.tenantId,
        ...subject.sessionColumns,
        method,
        preparation_id: preparation.id,
        source_version: version.version,
        state: 'open',
        created_at: now.toISOString(),
        expires_at: expiresAt.toISOString(),
        link_token_hash: link.hash,
        link_expires_at: expiresAt.toISOString(),
      });
      await subject.audit(trx, {
        action: 'session_initiated',
        actor: by.actor,
        origin: by.origin,
        details: {
          signer: subject.signer.email,
          signerName: subject.signer.name,
          method,
          contractHash: preparation.contractHash,
          fileVersion: version.version,
          expiresAt: expiresAt.toISOString(),
          supersededSession: open !== undefined,
        },
      });
    });
  } catch (error) {
    await dropPreparation(deps, preparation.id, subject.tenantId);
    throw error;
  }
  if (superseded) await dropPreparation(deps, superseded.preparationId, subject.tenantId);
  return {
    started: {
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
    },
    linkToken: link.token,
  };
}

/**
 * POST /api/signing/initiate: opens a session for the contract signer whose turn it is, on
 * the newest version of the contract; never past the contract's deadline.
 */
export async function initiateSession(deps: AppDeps, caller: ContractCaller, input: InitiateInput) {
  const contract = await contractInScope(deps, caller, input.contractId);
  assertContractSigning(contract, deps.clock.now());
  const signers = await signersOf(deps.db, contract.id);
  const signer = signers.find((s) => s.email_key === emailKey(input.signerEmail));
  if (!signer) throw sessionErrors.signerNotFound(input.signerEmail);
  const opened = await openContractSession(
    deps,
    contract,
    signers,
    signer,
    input.signingMethod,
    { actor: caller.auditActor, origin: caller.origin },
    input.origin,
  );
  return opened.started;
}

/**
 * The rules of a contract signer's session, whoever asks (a partner's initiate or the signer's
 * own invitation link): a signer, not signed yet, whose order has come; never past the deadline.
 */
export async function openContractSession(
  deps: AppDeps,
  contract: ContractRow,
  signers: readonly ContractSignerRow[],
  signer: ContractSignerRow,
  method: SigningMethod,
  by: { actor: AuditActor; origin: AuditOrigin },
  agentOrigin?: string,
) {
  if (signer.role !== 'signer') throw sessionErrors.notASigner();
  if (signer.status === 'signed') throw sessionErrors.alreadySigned();
  const waitingFor = blockingOrder(signers, signer);
  if (waitingFor !== null) throw sessionErrors.notYourTurn(waitingFor);
  const subject = contractSubject(deps, contract, signers, signer);
  return openSession(deps, subject, method, by, new Date(contract.expired_at), agentOrigin);
}

/**
 * POST /api/tasks/{taskCode}/signing-session: opens a session for the caller's turn of a
 * dossier task with a digital_signature or image_signature step, on the newest version of the
 * dossier's MAIN file; the workflow's refusals apply (404 TASK_NOT_FOUND, 409 NOT_YOUR_TURN…).
 */
export async function initiateTaskSession(
  deps: AppDeps,
  userId: number,
  input: { taskCode: string; signingMethod: SigningMethod },
  origin: AuditOrigin,
) {
  const opened = await openTaskSession(deps, userId, input, origin);
  return { ...opened.started, taskCode: input.taskCode };
}

/** The rules of a dossier task signer's session, whoever asks (the API or the signing page). */
export async function openTaskSession(
  deps: AppDeps,
  userId: number,
  input: { taskCode: string; signingMethod: SigningMethod },
  origin: AuditOrigin,
) {
  const subject = await taskSubject(deps, input.taskCode, userId, input.signingMethod);
  return openSession(
    deps,
    subject,
    input.signingMethod,
    { actor: subject.signerActor, origin },
    null,
  );
}

/**
 * POST /api/signing/page-credential: the signing page turns the token of its link into a page
 * credential for this session's steps (sent as X-Signing-Token), once. Records `viewed` by the
 * signer. 404 SIGNING_LINK_NOT_FOUND, 409 SIGNING_LINK_USED, 410 SIGNING_LINK_EXPIRED; a
 * session or subject that can no longer be signed answers as the steps do.
 */
export async function exchangeSigningLink(
  deps: AppDeps,
  token: string,
  origin: AuditOrigin,
  via: 'signing_link' | 'invitation' | 'web_app' = 'signing_link',
) {
  const found = await sessionByLinkHash(deps.db, bearerHash(deps.secrets, token));
  if (!found) throw sessionErrors.linkNotFound();
  const subject = await subjectOfSession(deps, found);
  const page = newBearer(deps.secrets);
  const session = await inTransaction(deps.db, async (trx) => {
    const session = (await sessionById(trx, found.id))!;
    const now = deps.clock.now();
    if (session.link_used_at !== null) throw sessionErrors.linkUsed();
    if (session.link_expires_at <= now.toISOString()) {
      throw sessionErrors.linkExpired(session.link_expires_at);
    }
    await subject.assertSignable(trx, now);
    assertSessionOpen(session, now);
    const spent = await spendSigningLink(trx, session.id, {
      link_used_at: now.toISOString(),
      page_token_hash: page.hash,
    });
    if (!spent) {
      // Another exchange (on this instance or another) changed the row since it was read.
      const current = (await sessionById(trx, session.id))!;
      if (current.link_used_at !== null) throw sessionErrors.linkUsed();
      assertSessionOpen(current, now);
      throw sessionErrors.linkUsed();
    }
    await subject.audit(trx, {
      action: 'viewed',
      actor: subject.signerActor,
      origin,
      details: { via, method: session.method },
    });
    return session;
  });
  const preparation = await findPreparation(deps, session.preparation_id, subject.tenantId);
  const described = { id: subject.summary.id, title: subject.summary.title };
  return {
    sessionId: session.public_id,
    pageCredential: page.token,
    expiresAt: session.expires_at,
    signingMethod: session.method,
    contractHash: preparation.contractHash,
    ...(subject.kind === 'contract' ? { contract: described } : { task: described }),
    signer: { name: subject.signer.name, email: subject.signer.email },
    ...(session.method === 'usb_token'
      ? await tokenSigning(deps, {
          origin: signingPageOrigin(deps),
          sessionId: session.public_id,
          contractHash: preparation.contractHash,
          expiresAt: new Date(session.expires_at),
        })
      : {}),
  };
}
