import type { Context, MiddlewareHandler } from 'hono';
import { originOf } from '../audit/origin';
import type { AuditActor, AuditOrigin } from '../audit/subject';
import { requireActor } from '../auth/authenticate';
import { guardCredentialCheck } from '../auth/rateLimit';
import type { AppDeps, AppEnv } from '../context';
import { callerOf } from '../contracts/access';
import { contractById } from '../contracts/queries';
import { constantTimeEqual } from '../platform/secrets';
import { sessionErrors } from './errors';
import { type SessionRow, sessionByPublicId } from './queries';
import { assertSessionOpen } from './rules';
import { bearerHash } from './secrets';
import type { SigningSubject } from './subject';
import { subjectOfSession } from './subjects';

/** The header the signing page sends its page credential in (from the link exchange). */
export const pageCredentialHeader = 'x-signing-token';

/** A session step as it is about to run: the session, what it signs, who acts. */
export interface StepContext {
  session: SessionRow;
  subject: SigningSubject;
  /** The partner's user, or the signer on the signing page. */
  actor: AuditActor;
  origin: AuditOrigin;
}

/**
 * Who may act without the page credential: for a contract, a partner credential (checked by
 * the route's guard) whose scope holds the contract; for a dossier task, the user the session
 * signs for. Anyone else is told the session does not exist.
 */
async function credentialActor(
  c: Context<AppEnv>,
  session: SessionRow,
): Promise<AuditActor | null> {
  const deps: AppDeps = c.get('deps');
  if (session.contract_id === null) {
    if (requireActor(c.get('principal')).id !== session.user_id) {
      throw sessionErrors.sessionNotFound();
    }
    return null;
  }
  const contract = (await contractById(deps.db, session.contract_id))!;
  const caller = await callerOf(c);
  const { tenantId, ownerUserId } = caller.scope;
  const inScope =
    contract.tenant_id === tenantId &&
    (ownerUserId === null || contract.created_by_user_id === ownerUserId);
  if (!inScope) throw sessionErrors.sessionNotFound();
  return caller.auditActor;
}

/** 401 unless `pageToken` is the page credential of `session` (failures count as the auth limit). */
async function checkPageCredential(
  c: Context<AppEnv>,
  session: SessionRow | undefined,
  pageToken: string,
): Promise<void> {
  const deps: AppDeps = c.get('deps');
  await guardCredentialCheck(c, async () => {
    const stored = session?.page_token_hash;
    if (!stored || !constantTimeEqual(bearerHash(deps.secrets, pageToken), stored)) {
      throw sessionErrors.pageCredentialInvalid();
    }
  });
}

/**
 * The signing page's credential checked as a route guard, so that a step's body is read only
 * for a caller holding it (stepContext checks it again with the session it loads).
 */
export const requirePageCredential: MiddlewareHandler<AppEnv> = async (c, next) => {
  const deps: AppDeps = c.get('deps');
  const session = await sessionByPublicId(deps.db, c.req.param('sessionId') ?? '');
  await checkPageCredential(c, session, c.req.header(pageCredentialHeader) ?? '');
  await next();
};

/**
 * Resolves who may take a step of `sessionId`: the signing page with this session's page
 * credential, or a credential that may act on its subject (credentialActor). Then the subject
 * must still be signable (409 with its code) and the session open and unexpired (409 by cause,
 * 410 SESSION_EXPIRED).
 */
export async function stepContext(c: Context<AppEnv>, sessionId: string): Promise<StepContext> {
  const deps: AppDeps = c.get('deps');
  const session = await sessionByPublicId(deps.db, sessionId);
  const pageToken = c.req.header(pageCredentialHeader);
  if (pageToken !== undefined) await checkPageCredential(c, session, pageToken);
  if (!session) throw sessionErrors.sessionNotFound();
  const actor = pageToken === undefined ? await credentialActor(c, session) : null;
  const subject = await subjectOfSession(deps, session);
  const now = deps.clock.now();
  await subject.assertSignable(deps.db, now);
  assertSessionOpen(session, now);
  return { session, subject, actor: actor ?? subject.signerActor, origin: originOf(c) };
}
