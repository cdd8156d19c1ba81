import { appendAuditEvent } from '../audit/chain';
import { auditDetailsOf, auditEventsOf } from '../audit/queries';
import { type AuditActor, type AuditOrigin, contractTrail, dossierTrail } from '../audit/subject';
import { toActor } from '../auth/authenticate';
import { findUserById } from '../auth/queries';
import type { AppDeps, Principal } from '../context';
import { contractNotFound } from '../contracts/access';
import { invitationTokenHash } from '../contracts/invitations';
import { assertContractSigning, signerActor } from '../contracts/lifecycle';
import {
  type ContractRow,
  type ContractSignerRow,
  contractById,
  contractByUuid,
  fileVersion,
  signerByInvitation,
  signersOf,
} from '../contracts/queries';
import { emailKey } from '../contracts/schemas';
import { openInvitation } from '../contracts/service';
import { inTransaction } from '../db/database';
import type { ContractStatus, DossierStatus, SigningMethod } from '../db/schema';
import { recordFileDownload } from '../dossiers/downloads';
import { DomainError } from '../errors/domainError';
import { dossierFiles, type NewestFile } from '../files/queries';
import { constantTimeEqual } from '../platform/secrets';
import { verifyPdfSignatures } from '../signing/verification';
import { roleLabel } from '../tasks/queries';
import { taskDetail, taskScopeOf } from '../tasks/service';
import {
  loadTaskContext,
  mayPerform,
  participantAt,
  type TaskContext,
} from '../workflow/taskContext';
import { contractSubject } from './contractSubject';
import { exchangeSigningLink, openContractSession, openTaskSession } from './initiate';
import { methodsFor } from './invitation';
import { type SessionRow, sessionByLinkHash, sessionByPublicId } from './queries';
import { blockingOrder } from './rules';
import { bearerHash } from './secrets';
import { methodsOfStep, taskSubject } from './taskSubject';
import { verifyContractRow } from './verify';

/**
 * What the web app's signing page (`/ky-so/…`) asks of the signing sessions, whichever way it is
 * reached: a session's single-use link, a contract signer's e-mailed invitation, a signed-in
 * user's dossier task or contract turn. The view of the subject for its signer (title, whose
 * turn, deadline, methods, the file), a session opened for the page with its page credential
 * answered at once, the session a browser holds (by that credential), the file and its
 * verification. Every rule stays the sessions' and the workflow's own.
 */

/** Why a signer can no longer sign, in words the page has a sentence for. */
export type ClosedReason =
  | 'completed'
  | 'cancelled'
  | 'expired'
  | 'rejected'
  | 'notSent'
  | 'handled'
  | 'notSigned';

/** Where the signer stands. */
export type SignerTurn =
  | { state: 'yours' }
  | { state: 'waiting'; waitingFor: string[] }
  | { state: 'signed'; at: string | null }
  | { state: 'declined' }
  | { state: 'viewer' }
  | { state: 'closed'; reason: ClosedReason };

/** What the page's file and verification are read from. */
export type PageSubject =
  | { kind: 'contract'; contractId: number; signerId: number }
  | {
      kind: 'task';
      taskId: number;
      taskCode: string;
      userId: number;
      dossierId: number;
      fileId: number;
    };

export interface SigningPageView {
  subject: PageSubject;
  title: string;
  /** The dossier step's name; null for a contract. */
  stepName: string | null;
  /** The contract's id, or the dossier's documentId. */
  reference: string;
  signer: { name: string; email: string | null };
  deadline: string | null;
  turn: SignerTurn;
  /** The methods the signer may pick now (none unless it is their turn). */
  methods: SigningMethod[];
  /** The newest version of the file signed: what the page shows and, once signed, offers. */
  document: { sha256: string; title: string; signed: boolean; tenantId: number };
}

const closedContract: Record<Exclude<ContractStatus, 'signing'>, ClosedReason> = {
  draft: 'notSent',
  completed: 'completed',
  cancelled: 'cancelled',
  expired: 'expired',
  rejected: 'rejected',
};

const closedDossier: Partial<Record<DossierStatus, ClosedReason>> = {
  COMPLETED: 'completed',
  REJECTED: 'rejected',
  EXPIRED: 'expired',
};

function contractTurn(
  contract: ContractRow,
  signers: readonly ContractSignerRow[],
  signer: ContractSignerRow,
  now: string,
): SignerTurn {
  if (signer.role !== 'signer') return { state: 'viewer' };
  if (signer.status === 'signed') return { state: 'signed', at: signer.signed_at };
  if (signer.status === 'rejected') return { state: 'declined' };
  if (contract.status !== 'signing') {
    return { state: 'closed', reason: closedContract[contract.status] };
  }
  if (contract.expired_at <= now) return { state: 'closed', reason: 'expired' };
  const order = blockingOrder(signers, signer);
  if (order === null) return { state: 'yours' };
  const waitingFor = signers
    .filter((s) => s.role === 'signer' && s.status !== 'signed' && s.signing_order === order)
    .map((s) => s.name);
  return { state: 'waiting', waitingFor };
}

/** A contract as one of its signers sees it on the signing page. */
export async function contractSignerView(
  deps: AppDeps,
  contract: ContractRow,
  signer: ContractSignerRow,
): Promise<SigningPageView> {
  const signers = await signersOf(deps.db, contract.id);
  const turn = contractTurn(contract, signers, signer, deps.clock.now().toISOString());
  const newest = (await fileVersion(deps.db, contract.id, 'newest'))!;
  const subject = contractSubject(deps, contract, signers, signer);
  return {
    subject: { kind: 'contract', contractId: contract.id, signerId: signer.id },
    title: contract.title,
    stepName: null,
    reference: contract.uuid,
    signer: { name: signer.name, email: signer.email },
    deadline: contract.expired_at,
    turn,
    methods: turn.state === 'yours' ? await methodsFor(deps, subject) : [],
    document: {
      sha256: newest.sha256,
      title: contract.title,
      signed: newest.version > 1,
      tenantId: contract.tenant_id,
    },
  };
}

function taskNotFound(): DomainError {
  return new DomainError('TASK_NOT_FOUND', 'No such task', { field: 'taskId' });
}

/** Who the active turn waits for: the signer as submitted, the account, else the role. */
async function turnHolder(deps: AppDeps, context: TaskContext): Promise<string[]> {
  const active = context.turns.find((turn) => turn.status === 'ACTIVE');
  if (!active) return [];
  if (active.signer_full_name) return [active.signer_full_name];
  if (active.assignee_user_id !== null) {
    const user = await findUserById(deps.db, active.assignee_user_id);
    if (user) return [user.name?.trim() || user.username];
  }
  const roleId = active.role_id ?? context.step.role_id;
  const role = roleId === null ? undefined : await roleLabel(deps.db, roleId);
  return role ? [role.name] : [];
}

async function taskTurn(deps: AppDeps, context: TaskContext, userId: number): Promise<SignerTurn> {
  const mine = context.turns.filter((turn) => turn.acted_by_user_id === userId);
  const signed = mine.find((turn) => turn.status === 'SIGNED');
  if (signed) return { state: 'signed', at: signed.acted_at };
  if (mine.some((turn) => turn.status === 'REJECTED')) return { state: 'declined' };
  if (!methodsOfStep[context.step.sign_type]) return { state: 'closed', reason: 'notSigned' };
  const ended = closedDossier[context.dossier.status];
  if (ended) return { state: 'closed', reason: ended };
  if (context.task.status !== 1) return { state: 'closed', reason: 'handled' };
  const now = deps.clock.now().toISOString();
  if (context.task.expireAt !== null && context.task.expireAt <= now) {
    return { state: 'closed', reason: 'expired' };
  }
  const participant = await participantAt(deps.db, userId, now);
  const active = context.turns.find((turn) => turn.status === 'ACTIVE');
  if (active && mayPerform(participant, active)) return { state: 'yours' };
  return { state: 'waiting', waitingFor: await turnHolder(deps, context) };
}

/**
 * A dossier task as the signed-in user sees it on the signing page: visible exactly when the
 * task detail (endpoint 7) shows it to them (404 TASK_NOT_FOUND otherwise), by its numeric id
 * or its code. The file is the dossier's MAIN file (a session signs exactly one).
 */
export async function taskSignerView(
  deps: AppDeps,
  principal: Principal,
  ref: { id: number } | { code: string },
): Promise<SigningPageView> {
  const context = await loadTaskContext(deps.db, ref);
  if (!context) throw taskNotFound();
  const scope = await taskScopeOf(deps, principal);
  const detail = await taskDetail(deps, scope, { code: context.task.code });
  const mains = (await dossierFiles(deps.db, context.dossier.id)).filter(
    (file) => file.kind === 'MAIN',
  );
  // Without exactly one MAIN file nothing is signed here (initiate refuses it likewise).
  const file = mains.length === 1 ? mains[0]! : undefined;
  const turn = file ? await taskTurn(deps, context, scope.userId) : closedNotSigned;
  const allowed = methodsOfStep[context.step.sign_type] ?? [];
  const user = (await findUserById(deps.db, scope.userId))!;
  return {
    subject: {
      kind: 'task',
      taskId: context.task.id,
      taskCode: context.task.code,
      userId: scope.userId,
      dossierId: context.dossier.id,
      fileId: file?.id ?? 0,
    },
    title: detail.document.documentTitle,
    stepName: detail.stepName,
    reference: detail.document.documentId || detail.document.documentUuid,
    signer: { name: user.name?.trim() || user.username, email: user.email },
    deadline: detail.expireAt ?? null,
    turn,
    methods:
      turn.state === 'yours' && allowed.length > 0
        ? await methodsFor(
            deps,
            await taskSubject(deps, context.task.code, scope.userId, allowed[0]!),
            allowed,
          )
        : [],
    document: {
      sha256: file?.sha256 ?? '',
      title: file?.title ?? detail.document.documentTitle,
      signed: (file?.version ?? 1) > 1,
      tenantId: context.task.tenantId,
    },
  };
}

const closedNotSigned: SignerTurn = { state: 'closed', reason: 'notSigned' };

/**
 * The contract turn of a signed-in user: the contract of their tenant with a signer whose e-mail
 * is the user's. Anyone else (no such contract, no such signer) gets 404 CONTRACT_NOT_FOUND.
 */
async function userSignerOf(deps: AppDeps, userId: number, contractId: string) {
  const user = await findUserById(deps.db, userId);
  const contract =
    user?.tenant_id != null
      ? await contractByUuid(deps.db, { tenantId: user.tenant_id, ownerUserId: null }, contractId)
      : undefined;
  const signers = contract ? await signersOf(deps.db, contract.id) : [];
  const key = user?.email ? emailKey(user.email) : undefined;
  const signer = signers.find((s) => key !== undefined && s.email_key === key);
  if (!contract || !signer) throw contractNotFound(contractId);
  return { contract, signer, signers };
}

export async function contractTurnView(
  deps: AppDeps,
  userId: number,
  contractId: string,
): Promise<SigningPageView> {
  const { contract, signer } = await userSignerOf(deps, userId, contractId);
  return contractSignerView(deps, contract, signer);
}

/** What the page credential a browser keeps for a page (in its cookie) names. */
export interface HeldCredential {
  sessionId: string;
  credential: string;
}

/** The session `held` names when its credential is that session's page credential. */
async function heldSession(
  deps: AppDeps,
  held: HeldCredential | undefined,
): Promise<SessionRow | undefined> {
  if (!held) return undefined;
  const session = await sessionByPublicId(deps.db, held.sessionId);
  const stored = session?.page_token_hash;
  if (!stored || !constantTimeEqual(bearerHash(deps.secrets, held.credential), stored)) {
    return undefined;
  }
  return session;
}

/** The held session when it belongs to this page's subject. */
export async function heldSessionOf(
  deps: AppDeps,
  view: SigningPageView,
  held: HeldCredential | undefined,
): Promise<SessionRow | undefined> {
  const session = await heldSession(deps, held);
  if (!session) return undefined;
  const { subject } = view;
  const ours =
    subject.kind === 'contract'
      ? session.signer_id === subject.signerId
      : session.task_id === subject.taskId && session.user_id === subject.userId;
  return ours ? session : undefined;
}

/** The view of the subject a session signs, for its signer. */
async function viewOfSession(deps: AppDeps, session: SessionRow): Promise<SigningPageView> {
  if (session.contract_id !== null && session.signer_id !== null) {
    const contract = (await contractById(deps.db, session.contract_id))!;
    const signer = (await signersOf(deps.db, contract.id)).find((s) => s.id === session.signer_id)!;
    return contractSignerView(deps, contract, signer);
  }
  // The page of a task session's link shows the task as its user sees it.
  const actor = toActor((await findUserById(deps.db, session.user_id!))!);
  return taskSignerView(deps, { kind: 'accessToken', actor }, { id: session.task_id! });
}

/** Why a session link opens nothing any more. */
export type LinkOver = 'used' | 'expired' | 'superseded' | 'locked' | 'ended';

export type LinkPage =
  | { state: 'invalid' }
  | { state: 'over'; reason: LinkOver }
  | { state: 'open'; view: SigningPageView; session: SessionRow; held: boolean };

/**
 * The page of a session's single-use link (`signingUrl`), looked at without using it: the link
 * is used by the page's exchange (a POST), never by opening it, so that a mail scanner fetching
 * it leaves it working. A browser holding the session's page credential sees its session
 * whatever became of the link.
 */
export async function linkPage(
  deps: AppDeps,
  token: string,
  held: HeldCredential | undefined,
): Promise<LinkPage> {
  const session = await sessionByLinkHash(deps.db, bearerHash(deps.secrets, token));
  if (!session) return { state: 'invalid' };
  const now = deps.clock.now().toISOString();
  const mine = (await heldSession(deps, held))?.id === session.id;
  // The browser that opened the session sees what it came to: signed or declined here.
  if (mine && (session.state === 'signed' || session.state === 'rejected')) {
    return { state: 'open', view: await viewOfSession(deps, session), session, held: true };
  }
  if (!mine && session.link_used_at !== null) return { state: 'over', reason: 'used' };
  if (session.state === 'superseded' || session.state === 'locked') {
    return { state: 'over', reason: session.state };
  }
  if (session.state !== 'open') return { state: 'over', reason: 'ended' };
  if ((!mine && session.link_expires_at <= now) || session.expires_at <= now) {
    return { state: 'over', reason: 'expired' };
  }
  return { state: 'open', view: await viewOfSession(deps, session), session, held: mine };
}

export type InvitationPage =
  | { state: 'invalid' }
  | {
      state: 'open';
      view: SigningPageView;
      /** Whether the invitation still opens the contract (signing, before the deadline). */
      usable: boolean;
      session: SessionRow | undefined;
    };

/**
 * The page of a contract signer's e-mailed invitation: the contract as that signer sees it, and
 * the session this browser holds. Opening a usable invitation records `viewed` (as the API's
 * read does). Once it no longer opens the contract, the page still says why.
 */
export async function invitationPage(
  deps: AppDeps,
  token: string,
  held: HeldCredential | undefined,
  /** Where the page was opened from, to record `viewed`; null for the page's file. */
  origin: AuditOrigin | null,
): Promise<InvitationPage> {
  const found = await signerByInvitation(deps.db, invitationTokenHash(token));
  if (!found) return { state: 'invalid' };
  const contract = (await contractById(deps.db, found.contract_id))!;
  const now = deps.clock.now().toISOString();
  const usable = contract.status === 'signing' && (found.invitation_expires_at ?? '') > now;
  if (usable && origin) await openInvitation(deps, token, origin);
  const view = await contractSignerView(deps, contract, found);
  return { state: 'open', view, usable, session: await heldSessionOf(deps, view, held) };
}

/** The session a signed-in user's page starts, with its page credential (exchangeSigningLink). */
export type StartedPageSession = Awaited<ReturnType<typeof exchangeSigningLink>>;

/**
 * A session for a signed-in user's dossier task turn, its page credential answered at once: the
 * same rules as POST /api/tasks/{taskCode}/signing-session.
 */
export async function startTaskPageSession(
  deps: AppDeps,
  userId: number,
  input: { taskCode: string; signingMethod: SigningMethod },
  origin: AuditOrigin,
): Promise<StartedPageSession> {
  const opened = await openTaskSession(deps, userId, input, origin);
  return exchangeSigningLink(deps, opened.linkToken, origin, 'web_app');
}

/**
 * A session for a signed-in user's contract turn (their e-mail is the signer's), its page
 * credential answered at once: the same rules as an initiate for that signer.
 */
export async function startContractTurnSession(
  deps: AppDeps,
  userId: number,
  input: { contractId: string; signingMethod: SigningMethod },
  origin: AuditOrigin,
): Promise<StartedPageSession> {
  const { contract, signer, signers } = await userSignerOf(deps, userId, input.contractId);
  assertContractSigning(contract, deps.clock.now());
  const opened = await openContractSession(deps, contract, signers, signer, input.signingMethod, {
    actor: signerActor(signer),
    origin,
  });
  return exchangeSigningLink(deps, opened.linkToken, origin, 'web_app');
}

/** A signature of the page's file, as the page tells it. */
export interface PageSignature {
  signerName: string | null;
  signedAt: string | null;
  isValid: boolean;
  integrityCheck: 'passed' | 'failed';
  certificateStatus: string;
  timestampVerified: boolean;
  level: string;
  /** The archive's document timestamp rather than a person's signature. */
  documentTimestamp: boolean;
}

export interface PageVerification {
  isValid: boolean;
  signatures: PageSignature[];
}

/**
 * The verification engine's result on the newest version of the page's file: for a contract,
 * what GET /api/signing/verify/{contractId} answers (signatures named by their contract signer);
 * for a dossier task, the MAIN file's signatures named by their certificates. Null before the
 * first signature.
 */
export async function pageVerification(
  deps: AppDeps,
  view: SigningPageView,
): Promise<PageVerification | null> {
  if (!view.document.signed) return null;
  const { subject } = view;
  const result =
    subject.kind === 'contract'
      ? await verifyContractRow(deps, (await contractById(deps.db, subject.contractId))!)
      : await deps.files.withLocalFile(view.document.sha256, (file) =>
          verifyPdfSignatures(deps, file, { tenantId: view.document.tenantId }),
        );
  const names =
    subject.kind === 'task'
      ? await taskSignerNames(deps, subject.dossierId, result.signatures)
      : result.signatures.map((signature) => signature.signerName);
  return {
    isValid: result.isValid,
    signatures: result.signatures.map((signature, index) => ({
      signerName: names[index] ?? null,
      signedAt: signature.signedAt,
      isValid: signature.isValid,
      integrityCheck: signature.integrityCheck,
      certificateStatus: signature.certificateStatus,
      timestampVerified: signature.timestampVerified,
      level: signature.level,
      documentTimestamp: signature.subFilter === 'ETSI.RFC3161',
    })),
  };
}

/**
 * The signatures of a dossier's MAIN file named by who signed them: the `signed` events of its
 * trail, in order, when they are as many as its signatures (a dossier signs its one MAIN file);
 * else (a file that came signed) the certificates' names, which for the service seal name the
 * service rather than the person.
 */
async function taskSignerNames(
  deps: AppDeps,
  dossierId: number,
  signatures: readonly { signerName: string | null; subFilter: string | null }[],
): Promise<(string | null)[]> {
  const signed = (await auditEventsOf(deps.db, dossierTrail(dossierId)))
    .filter((event) => event.action === 'signed')
    .map((event) => {
      const { signerName } = auditDetailsOf(event);
      return typeof signerName === 'string' ? signerName : null;
    });
  const ours = signatures.filter((signature) => signature.subFilter !== 'ETSI.RFC3161');
  if (signed.length !== ours.length) return signatures.map((signature) => signature.signerName);
  let next = 0;
  return signatures.map((signature) =>
    signature.subFilter === 'ETSI.RFC3161' ? signature.signerName : signed[next++]!,
  );
}

/** The dossier's MAIN file the task signs, as the file listing knows it. */
async function taskFile(deps: AppDeps, subject: Extract<PageSubject, { kind: 'task' }>) {
  const files = await dossierFiles(
    deps.db,
    (await loadTaskContext(deps.db, { id: subject.taskId }))!.dossier.id,
  );
  return files.find((file) => file.id === subject.fileId);
}

/**
 * The signer downloads the signed file from the page: recorded in the subject's audit trail
 * (`downloaded`, by the signer) before the bytes go. Null before the first signature.
 */
export async function recordSignerDownload(
  deps: AppDeps,
  view: SigningPageView,
  origin: AuditOrigin,
): Promise<NewestFile | { sha256: string } | null> {
  if (!view.document.signed) return null;
  const { subject } = view;
  if (subject.kind === 'task') {
    const file = await taskFile(deps, subject);
    if (!file) return null;
    const user = (await findUserById(deps.db, subject.userId))!;
    const actor: AuditActor = {
      kind: 'user',
      userId: user.id,
      name: user.name?.trim() || user.username,
    };
    await recordFileDownload(deps, file, { actor, origin, via: 'signing_page' });
    return file;
  }
  const contract = (await contractById(deps.db, subject.contractId))!;
  const signer = (await signersOf(deps.db, contract.id)).find((s) => s.id === subject.signerId)!;
  await inTransaction(deps.db, (trx) =>
    appendAuditEvent(trx, deps.clock, contractTrail(contract.id), {
      action: 'downloaded',
      actor: signerActor(signer),
      origin,
      details: { type: 'signed', via: 'signing_page' },
    }),
  );
  return { sha256: view.document.sha256 };
}
