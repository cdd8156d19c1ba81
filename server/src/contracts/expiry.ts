import type { AppDeps } from '../context';
import { inTransaction } from '../db/database';
import { expireAtDeadline } from './lifecycle';
import { contractById, overdueContracts } from './queries';

/** How many overdue contracts one pass reads at a time. */
const batchSize = 200;

type ExpiryDeps = Pick<AppDeps, 'db' | 'config' | 'clock' | 'secrets'>;

/**
 * Expires every draft or signing contract whose `expiredAt` is at or before now, each in its own
 * transaction (lifecycle.ts: the `expired` event and the creator's e-mail commit with it). Run
 * by the deadline scheduler with the workflow's task deadlines; safe from several processes.
 */
export async function expireOverdueContracts(deps: ExpiryDeps): Promise<number> {
  let expired = 0;
  for (;;) {
    const due = await overdueContracts(deps.db, deps.clock.now().toISOString(), batchSize);
    let expiredNow = 0;
    for (const { id } of due) {
      const moved = await inTransaction(deps.db, async (trx) => {
        const contract = await contractById(trx, id);
        return contract ? expireAtDeadline(trx, deps, contract) : false;
      });
      if (moved) expiredNow += 1;
    }
    expired += expiredNow;
    if (due.length < batchSize || expiredNow === 0) return expired;
  }
}
