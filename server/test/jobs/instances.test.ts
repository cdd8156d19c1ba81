import { dialectVariable } from '../../../test/support/postgres';
import { inTransaction } from '../../src/db/database';
import { type ClaimedJob, claimJobs, enqueue, type QueueDeps } from '../../src/jobs/queue';
import { type Runner, startRunner } from '../../src/jobs/runner';
import { scheduleStorageSweep, storageSweepKind } from '../../src/storage/sweepJob';
import { createHarness, type Harness } from '../support/harness';
import { anotherInstance, type Instance } from '../support/instances';
import { until } from '../webhooks/fixtures';
import { jobRow, testKind } from './fixtures';

/**
 * The job queue with several instances on one database (issue 19): two runtimes (each its own
 * connection or pool, its own runner) on the harness's database and clock. On PostgreSQL they
 * claim with FOR UPDATE SKIP LOCKED and wake each other by NOTIFY; on SQLite they share the
 * file's writer lock and poll. No timing is asserted but the wake-up's, with a wide bound.
 */

jest.setTimeout(120_000);

const onPostgresDialect = process.env[dialectVariable] === 'postgres';
const onPostgres = onPostgresDialect ? it : it.skip;

let h: Harness;
let other: Instance;
const runners: Runner[] = [];
beforeEach(() => {
  h = createHarness();
  other = anotherInstance(h);
});
afterEach(async () => {
  for (const runner of runners.splice(0)) await runner.stop();
  await other.close();
  await h.close();
});

function enqueueMany(deps: QueueDeps, kind: string, payloads: unknown[]): Promise<number[]> {
  return inTransaction(deps.db, async (trx) => {
    const ids: number[] = [];
    for (const payload of payloads) {
      ids.push(
        await enqueue(trx, deps, { kind, maxAttempts: 3, payload: JSON.stringify(payload) }),
      );
    }
    return ids;
  });
}

/** Runs of each job, by the instance that ran it: the receiver both instances' handlers call. */
function receiver() {
  const runs = new Map<number, string[]>();
  const handler = (instance: string) => async (_payload: unknown, job: ClaimedJob) => {
    runs.set(job.id, [...(runs.get(job.id) ?? []), instance]);
    // A little work, so that both runners have claims in flight at once.
    await new Promise((resolve) => setTimeout(resolve, 1));
    return 'ok';
  };
  return { runs, handler };
}

describe('two instances, each running a runner, on one database', () => {
  it('run each of 500 jobs exactly once, both taking part', async () => {
    const { runs, handler } = receiver();
    const a = testKind({ concurrency: 4, run: handler('a') });
    const b = testKind({ concurrency: 4, run: handler('b') });
    runners.push(startRunner(h.deps, [a.kind], { pollIntervalMs: 50 }));
    runners.push(startRunner(other.deps, [b.kind], { pollIntervalMs: 50 }));
    // Enqueued by both instances, in batches, while both runners claim.
    const ids: number[] = [];
    for (let batch = 0; batch < 10; batch += 1) {
      const deps = batch % 2 === 0 ? h.deps : other.deps;
      ids.push(
        ...(await enqueueMany(
          deps,
          'test.echo',
          Array.from({ length: 50 }, (_, n) => ({ batch, n })),
        )),
      );
    }
    expect(new Set(ids).size).toBe(500);
    await until(
      async () => {
        const done = await h.deps.db
          .selectFrom('jobs')
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .where('status', '=', 'done')
          .executeTakeFirstOrThrow();
        return Number(done.count) === 500;
      },
      () => '500 jobs done',
      90_000,
    );
    for (const runner of runners.splice(0)) await runner.stop();
    // Every job ran once: none missed, none twice, each recorded by the claim that ran it.
    expect([...runs.keys()].sort((x, y) => x - y)).toEqual(ids);
    expect([...runs.values()].filter((by) => by.length !== 1)).toEqual([]);
    const rows = await h.deps.db
      .selectFrom('jobs')
      .select(['status', 'attempts', 'lease_id'])
      .where('id', 'in', ids)
      .execute();
    expect(rows.filter((row) => row.status !== 'done' || row.attempts !== 1)).toEqual([]);
    // (A transaction retried by PostgreSQL calls the hook again: ids are counted, not calls.)
    const recorded = [...a.noted.recorded, ...b.noted.recorded];
    expect(new Set(recorded.map((entry) => entry.id)).size).toBe(500);
    expect(recorded.filter((entry) => entry.state !== 'done')).toEqual([]);
    // Both instances ran jobs (each had 4 slots; 500 jobs of 1 ms cannot all go to one).
    const byA = [...runs.values()].filter(([by]) => by === 'a').length;
    expect(byA).toBeGreaterThan(0);
    expect(byA).toBeLessThan(500);
  });

  onPostgres(
    'a job enqueued on one instance wakes the other’s runner at once, not at its next poll (30 s): run within 5 s',
    async () => {
      const { runs, handler } = receiver();
      const b = testKind({ kind: 'test.wake', run: handler('b') });
      const runner = startRunner(other.deps, [b.kind], { pollIntervalMs: 30_000 });
      runners.push(runner);
      // The runner has looked once, found nothing and sleeps for its poll interval.
      await runner.whenIdle();
      const started = Date.now();
      const [id] = await enqueueMany(h.deps, 'test.wake', [{ n: 1 }]);
      await until(
        async () => runs.has(id!),
        () => 'the woken run',
        10_000,
      );
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(runs.get(id!)).toEqual(['b']);
    },
  );

  it('a claim whose instance stops without settling: its lease expires and the other instance runs each job once', async () => {
    const { runs, handler } = receiver();
    // Instance "other" claims three jobs (30 s leases), then stops before running them: what a
    // killed process leaves behind.
    const dying = testKind({ concurrency: 3, run: handler('dying') });
    const ids = await enqueueMany(h.deps, 'test.echo', [{ n: 1 }, { n: 2 }, { n: 3 }]);
    const claimed = await claimJobs(other.deps, [{ kind: dying.kind, limit: 3 }]);
    expect(claimed.map((task) => task.job.id).sort()).toEqual([...ids].sort());
    await other.close();
    other = anotherInstance(h);
    // While the leases stand, the surviving instance leaves the jobs alone.
    const survivor = testKind({ concurrency: 3, run: handler('survivor') });
    const runner = startRunner(h.deps, [survivor.kind], { poll: false });
    runners.push(runner);
    await runner.drain();
    expect(runs.size).toBe(0);
    // The leases expire: the survivor runs each job once, as its second attempt.
    h.clock.advance(30_001);
    await runner.drain();
    expect([...runs.entries()].sort(([x], [y]) => x - y)).toEqual(
      ids.map((id) => [id, ['survivor']]),
    );
    for (const id of ids) {
      expect(await jobRow(h, id)).toMatchObject({ status: 'done', attempts: 2, lease_id: null });
    }
    expect(survivor.noted.recorded.map((entry) => entry.state)).toEqual(['done', 'done', 'done']);
  });

  it('start-ups at once schedule one storage sweep between them', async () => {
    // On SQLite the start-ups share one connection: two better-sqlite3 connections in one thread
    // cannot wait for each other's write lock (separate processes do: see
    // test/workflow/deadlines.test.ts).
    const starting = onPostgresDialect ? [h.deps, other.deps] : [h.deps];
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, n) => scheduleStorageSweep(starting[n % starting.length]!)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    const pending = await h.deps.db
      .selectFrom('jobs')
      .select('id')
      .where('kind', '=', storageSweepKind)
      .where('status', '=', 'pending')
      .execute();
    expect(pending).toHaveLength(1);
  });
});
