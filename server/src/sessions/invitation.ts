import type { AuditOrigin } from '../audit/subject';
import type { AppDeps } from '../context';
import { assertContractSigning, signerActor } from '../contracts/lifecycle';
import { signersOf } from '../contracts/queries';
import { signingMethods } from '../contracts/schemas';
import { openInvitation, resolveInvitation } from '../contracts/service';
import type { SigningMethod } from '../db/schema';
import { contractSubject } from './contractSubject';
import { exchangeSigningLink, openContractSession } from './initiate';
import { hasCloudKey } from './keys';
import { blockingOrder } from './rules';
import type { SigningSubject } from './subject';

/**
 * The methods a signer may pick among `candidates` (a contract sets no method, so all four):
 * cloud_hsm only when the signer has an enrolled key (always outside production), since
 * initiate would refuse it.
 */
export async function methodsFor(
  deps: AppDeps,
  subject: SigningSubject,
  candidates: readonly SigningMethod[] = signingMethods,
): Promise<SigningMethod[]> {
  if (!candidates.includes('cloud_hsm')) return [...candidates];
  const cloudKey = await hasCloudKey(deps, subject);
  return candidates.filter((method) => method !== 'cloud_hsm' || cloudKey);
}

/**
 * POST /api/signing/invitation: what the invitation link's page shows before a method is chosen,
 * the contract, the signer, whether it is their turn, the methods. Records `viewed`.
 */
export async function readInvitation(deps: AppDeps, token: string, origin: AuditOrigin) {
  const { contract, signer } = await openInvitation(deps, token, origin);
  const signers = await signersOf(deps.db, contract.id);
  const waitingForOrder = signer.role === 'signer' ? blockingOrder(signers, signer) : null;
  const canSign = signer.role === 'signer' && signer.status !== 'signed';
  return {
    contract: { id: contract.uuid, title: contract.title, expiredAt: contract.expired_at },
    signer: { name: signer.name, email: signer.email, role: signer.role, status: signer.status },
    yourTurn: canSign && waitingForOrder === null,
    waitingForOrder,
    signingMethods: canSign
      ? await methodsFor(deps, contractSubject(deps, contract, signers, signer))
      : [],
  };
}

/**
 * POST /api/signing/invitation/session: the signer's own initiate through their standing link
 * (valid until the deadline); it supersedes their open session as any initiate does. Answers
 * what the page-credential exchange answers: the link of the new session is exchanged at once.
 */
export async function startInvitationSession(
  deps: AppDeps,
  input: { token: string; signingMethod: SigningMethod },
  origin: AuditOrigin,
) {
  const { contract, signer } = await resolveInvitation(deps, input.token);
  assertContractSigning(contract, deps.clock.now());
  const signers = await signersOf(deps.db, contract.id);
  const opened = await openContractSession(deps, contract, signers, signer, input.signingMethod, {
    actor: signerActor(signer),
    origin,
  });
  return exchangeSigningLink(deps, opened.linkToken, origin, 'invitation');
}
