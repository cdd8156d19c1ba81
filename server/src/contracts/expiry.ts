import { appendAuditEvent } from '../audit/chain';
import { contractTrail, systemActor } from '../audit/subject';
import { findUserById } from '../auth/queries';
import type { AppDeps } from '../context';
import { inTransaction } from '../db/database';
import { queueContractMail } from './invitations';
import { contractById, overdueContracts, transitionContract } from './queries';

/** How many overdue contracts one pass reads at a time. */
const batchSize = 200;

type ExpiryDeps = Pick<AppDeps, 'db' | 'config' | 'clock' | 'secrets'>;

/**
 * Moves a draft or signing contract whose deadline has passed to `expired`, inside its own
 * transaction: the `expired` event and the creator's e-mail commit with it. Returns false,
 * writing nothing, when it is no longer open or not yet due, so running twice expires it once.
 */
async function expireContract(deps: ExpiryDeps, contractId: number): Promise<boolean> {
  return inTransaction(deps.db, async (trx) => {
    const contract = await contractById(trx, contractId);
    const now = deps.clock.now().toISOString();
    if (!contract || contract.expired_at > now) return false;
    const moved = await transitionContract(trx, contract.id, ['draft', 'signing'], {
      status: 'expired',
      ended_at: contract.expired_at,
      updated_at: now,
    });
    if (!moved) return false;
    await appendAuditEvent(trx, deps.clock, contractTrail(contract.id), {
      action: 'expired',
      actor: systemActor,
      details: { deadline: contract.expired_at, from: contract.status },
    });
    const creator = await findUserById(trx, contract.created_by_user_id);
    if (creator?.email) {
      await queueContractMail(trx, deps, contract, 'expired', {
        name: creator.name?.trim() || creator.username,
        email: creator.email,
      });
    }
    return true;
  });
}

/**
 * Expires every draft or signing contract whose `expiredAt` is at or before now. Run by the
 * deadline scheduler with the workflow's task deadlines; safe from several processes.
 */
export async function expireOverdueContracts(deps: ExpiryDeps): Promise<number> {
  let expired = 0;
  for (;;) {
    const due = await overdueContracts(deps.db, deps.clock.now().toISOString(), batchSize);
    let expiredNow = 0;
    for (const { id } of due) if (await expireContract(deps, id)) expiredNow += 1;
    expired += expiredNow;
    if (due.length < batchSize || expiredNow === 0) return expired;
  }
}
