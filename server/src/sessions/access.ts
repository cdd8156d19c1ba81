import type { Context } from 'hono';
import { guardCredentialCheck } from '../auth/rateLimit';
import type { AppDeps, AppEnv } from '../context';
import { callerOf, originOf } from '../contracts/access';
import type { AuditActor, AuditOrigin } from '../contracts/audit';
import {
  type ContractRow,
  type ContractSignerRow,
  contractById,
  signersOf,
} from '../contracts/queries';
import { constantTimeEqual } from '../platform/secrets';
import { sessionErrors } from './errors';
import { type SessionRow, sessionByPublicId } from './queries';
import { assertContractSigning, assertSessionOpen } from './rules';
import { bearerHash } from './secrets';

/** The header the signing page sends its page credential in (from the link exchange). */
export const pageCredentialHeader = 'x-signing-token';

/** A session step as it is about to run: the session, its contract and signer, who acts. */
export interface StepContext {
  session: SessionRow;
  contract: ContractRow;
  signer: ContractSignerRow;
  signers: ContractSignerRow[];
  /** The partner's user, or the signer on the signing page. */
  actor: AuditActor;
  origin: AuditOrigin;
}

export function signerActor(signer: ContractSignerRow): AuditActor {
  return { kind: 'signer', signerId: signer.id, name: `${signer.name} <${signer.email}>` };
}

/**
 * Resolves who may take a step of `sessionId`: the signing page with this session's page
 * credential, or a partner credential (checked by the route's guard) whose scope holds the
 * contract. Then the contract must still be signing (409 with its code) and the session open
 * and unexpired (409 by cause, 410 SESSION_EXPIRED).
 */
export async function stepContext(c: Context<AppEnv>, sessionId: string): Promise<StepContext> {
  const deps: AppDeps = c.get('deps');
  const session = await sessionByPublicId(deps.db, sessionId);
  const pageToken = c.req.header(pageCredentialHeader);
  let actor: AuditActor | undefined;
  if (pageToken !== undefined) {
    await guardCredentialCheck(c, async () => {
      const stored = session?.page_token_hash;
      if (!stored || !constantTimeEqual(bearerHash(deps.secrets, pageToken), stored)) {
        throw sessionErrors.pageCredentialInvalid();
      }
    });
  }
  if (!session) throw sessionErrors.sessionNotFound();
  const contract = (await contractById(deps.db, session.contract_id))!;
  if (pageToken === undefined) {
    const caller = await callerOf(c);
    const { tenantId, ownerUserId } = caller.scope;
    const inScope =
      contract.tenant_id === tenantId &&
      (ownerUserId === null || contract.created_by_user_id === ownerUserId);
    if (!inScope) throw sessionErrors.sessionNotFound();
    actor = caller.auditActor;
  }
  const signers = await signersOf(deps.db, contract.id);
  const signer = signers.find((s) => s.id === session.signer_id)!;
  const now = deps.clock.now();
  assertContractSigning(contract, now);
  assertSessionOpen(session, now);
  return {
    session,
    contract,
    signer,
    signers,
    actor: actor ?? signerActor(signer),
    origin: originOf(c),
  };
}
