import { passCount } from '../../src/jobs/queries';
import { claimCurrentPeriod } from '../../src/jobs/schedule';
import {
  type DeadlineScheduler,
  deadlinePassName,
  startDeadlineScheduler,
} from '../../src/workflow/deadlines';
import { createDossier, dossierRow, historyOf } from '../support/dossiers';
import { anotherInstance, type Instance } from '../support/instances';
import { until } from '../webhooks/fixtures';
import { day, guestAnh, useWorkflowWorld } from './world';

/**
 * The deadline passes with several instances on one database (issue 19): every instance runs a
 * scheduler, and each period's pass runs on one of them (the period is claimed in
 * scheduled_runs). Two schedulers on the harness's database and clock, ticking every 20 ms of
 * real time; their periods are 40 ms of the (manual) clock, which moves only when the test
 * moves it. No timing is asserted.
 */

jest.setTimeout(120_000);

const periodMs = 40;
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

describe('two deadline schedulers on one database', () => {
  const context = useWorkflowWorld();
  let other: Instance;
  const schedulers: DeadlineScheduler[] = [];
  beforeAll(() => {
    other = anotherInstance(context.h);
  });
  afterAll(async () => {
    for (const scheduler of schedulers) await scheduler.stop();
    await other.close();
  });

  it('expire each overdue task once, and the pass runs once per period between them', async () => {
    const { h, world } = context;
    const dossiers: { id: number }[] = [];
    for (let n = 0; n < 4; n += 1) {
      dossiers.push(
        await createDossier(h, world.process, {
          signers: [guestAnh, { stepCode: 'DUYET', userId: world.hung.row.id }],
        }),
      );
    }
    // Which instance ran each pass (a pass run after the tasks' and the contracts').
    const passes: string[] = [];
    const counted = (instance: string) => ({
      name: 'counted',
      run: async () => {
        passes.push(instance);
        return 0;
      },
    });
    schedulers.push(startDeadlineScheduler(h.deps, periodMs, [counted('a')]));
    schedulers.push(startDeadlineScheduler(other.deps, periodMs, [counted('b')]));

    // The clock stands still: one period, one pass, however often the schedulers tick.
    await until(
      () => passes.length > 0,
      () => 'the first pass',
    );
    await settle();
    expect(passes).toHaveLength(1);
    expect(await passCount(h.deps.db, deadlinePassName)).toBe(1);

    // A day later every task is overdue: the next period's pass (on one instance) expires them.
    h.clock.advance(day * 1000);
    await until(
      async () => {
        const rows = await Promise.all(dossiers.map((d) => dossierRow(h, d.id)));
        return rows.every((row) => row.status === 'EXPIRED');
      },
      () => 'every dossier expired',
    );
    await settle();
    expect(passes).toHaveLength(2);
    for (const dossier of dossiers) {
      expect((await historyOf(h, dossier.id)).map((row) => row.action)).toEqual(['OVERDUE']);
    }

    // One more period: one more pass.
    h.clock.advance(periodMs);
    await until(
      () => passes.length === 3,
      () => 'the third pass',
    );
    await settle();
    expect(passes).toHaveLength(3);
    expect(await passCount(h.deps.db, deadlinePassName)).toBe(3);
  });

  it('of instances claiming one period at once, one gets it', async () => {
    const { h } = context;
    h.clock.advance(day * 1000);
    const claims = await Promise.all(
      Array.from({ length: 10 }, (_, n) =>
        claimCurrentPeriod(n % 2 === 0 ? h.deps : other.deps, 'test.period', periodMs),
      ),
    );
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await claimCurrentPeriod(h.deps, 'test.period', periodMs)).toBe(false);
    h.clock.advance(periodMs);
    expect(await claimCurrentPeriod(other.deps, 'test.period', periodMs)).toBe(true);
    expect(await passCount(h.deps.db, 'test.period')).toBe(2);
  });
});
