import { sql } from 'kysely';
import { expireOverdueTasks } from '../../src/workflow/deadlines';
import { approveOpenTask, createDossier, turnsOf } from '../support/dossiers';
import type { Harness } from '../support/harness';
import { accountOf, day, guestAnh, useWorkflowWorld } from './world';

/**
 * `turns.task_waiting` (migration 026) is what the pending task list reads instead of each task's
 * status: it must equal "the turn's task has status 1" after every workflow change, whichever code
 * made it. Walked here through the real workflow (create, approve step by step, expire), the
 * column is compared with the tasks table after each step.
 */

async function mismatches(h: Harness): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*) AS n FROM turns
    WHERE task_waiting IS DISTINCT FROM coalesce((SELECT CASE WHEN status = 1 THEN 1 ELSE 0 END FROM tasks WHERE id = turns.task_id), 0)
  `.execute(h.deps.db);
  return rows[0]!.n;
}

const waiting = async (h: Harness, dossierId: number) =>
  (await turnsOf(h, dossierId)).filter((turn) => turn.task_waiting === 1).length;

describe('turns.task_waiting follows the status of the turn’s task', () => {
  const context = useWorkflowWorld();

  it('through creation, each approval and the end of the dossier', async () => {
    const { h, world } = context;
    const dossier = await createDossier(h, world.process, {
      signers: [{ ...guestAnh }, { stepCode: 'DUYET', userId: world.lan.row.id }],
    });
    expect(await waiting(h, dossier.id)).toBe(1);
    expect(await mismatches(h)).toBe(0);
    await approveOpenTask(h, dossier.id, (await accountOf(h, guestAnh.identityNumber)).id);
    expect(await waiting(h, dossier.id)).toBe(1);
    expect(await mismatches(h)).toBe(0);
    await approveOpenTask(h, dossier.id, world.lan.row.id);
    expect(await mismatches(h)).toBe(0);
  });

  it('when the deadline expires the waiting task', async () => {
    const { h, world } = context;
    const dossier = await createDossier(h, world.process, {
      signers: [{ ...guestAnh }, { stepCode: 'DUYET', userId: world.hung.row.id }],
    });
    expect(await waiting(h, dossier.id)).toBe(1);
    h.clock.advance(2 * day * 1000);
    expect(await expireOverdueTasks(h.deps)).toBeGreaterThan(0);
    expect(await waiting(h, dossier.id)).toBe(0);
    expect(await mismatches(h)).toBe(0);
  });
});
