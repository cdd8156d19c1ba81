import { onSqlite } from '../../../test/support/onSqlite';
import { inTransaction, sqliteHandle } from '../../src/db/database';
import { dueJobsQuery } from '../../src/jobs/queries';
import { claimJobs, enqueue, recordResults } from '../../src/jobs/queue';
import { startRunner } from '../../src/jobs/runner';
import { createHarness, type Harness } from '../support/harness';
import { until } from '../webhooks/fixtures';
import { enqueueJobs, gate, jobRow, testKind } from './fixtures';

/**
 * The one job queue on its own: claims and leases, allocation ids, each kind's retry schedule
 * and concurrency, stop handing claims back, group commits. Webhooks and notifications have
 * their own tests on top of it.
 */

jest.setTimeout(60_000);

let h: Harness;
beforeEach(() => {
  h = createHarness();
});
afterEach(() => h.close());

/** A sleep that ends only by a wake-up or stop: the runner moves on events, not on timers. */
const neverEnding = (_ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));

describe('enqueue: inside the caller transaction', () => {
  it('a job commits with the transaction and is gone with its rollback', async () => {
    const [id] = await enqueueJobs(h, 'test.echo', [{ n: 1 }]);
    expect(await jobRow(h, id!)).toMatchObject({
      kind: 'test.echo',
      status: 'pending',
      attempts: 0,
      max_attempts: 3,
      run_at: h.now(),
      lease_id: null,
      payload: '{"n":1}',
    });
    await expect(
      inTransaction(h.deps.db, async (trx) => {
        await enqueue(trx, h.deps, { kind: 'test.echo', maxAttempts: 1 });
        throw new Error('business rule broken');
      }),
    ).rejects.toThrow('business rule broken');
    const count = await h.deps.db
      .selectFrom('jobs')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(count.n).toBe(1);
  });
});

describe('claim and lease', () => {
  it('leases a due job once, counts the attempt at claim, and hands it out again when the lease expires', async () => {
    const { kind } = testKind({ leaseMs: 30_000 });
    const [id] = await enqueueJobs(h, 'test.echo', [{ n: 1 }]);
    const [first] = await claimJobs(h.deps, [{ kind, limit: 10 }]);
    expect(first!.job).toMatchObject({ id, attempt: 1, interrupted: false });
    expect(await jobRow(h, id!)).toMatchObject({
      attempts: 1,
      lease_id: first!.job.leaseId,
      // While leased, the due time is the lease expiry.
      run_at: new Date(h.clock.now().getTime() + 30_000).toISOString(),
      last_attempt_at: h.now(),
    });
    expect(await claimJobs(h.deps, [{ kind, limit: 10 }])).toEqual([]);
    h.clock.advance(29_999);
    expect(await claimJobs(h.deps, [{ kind, limit: 10 }])).toEqual([]);
    h.clock.advance(1);
    const [again] = await claimJobs(h.deps, [{ kind, limit: 10 }]);
    expect(again!.job).toMatchObject({ id, attempt: 2, interrupted: true });
    expect(again!.job.leaseId).not.toBe(first!.job.leaseId);
  });

  it('fails, without running it, a job whose last attempt was cut off', async () => {
    const { kind, noted } = testKind({ leaseMs: 1_000 });
    const [id] = await enqueueJobs(h, 'test.echo', [{}], 1);
    await claimJobs(h.deps, [{ kind, limit: 10 }]);
    h.clock.advance(1_000);
    expect(await claimJobs(h.deps, [{ kind, limit: 10 }])).toEqual([]);
    expect(await jobRow(h, id!)).toMatchObject({
      status: 'failed',
      attempts: 1,
      lease_id: null,
      last_error: 'interrupted',
      finished_at: h.now(),
    });
    expect(noted.ended).toEqual([{ id, error: 'interrupted' }]);
  });

  it('ends a job its kind refuses at claim, without counting an attempt', async () => {
    const { kind, noted } = testKind();
    const [id] = await enqueueJobs(h, 'test.echo', [{ refuse: 'receiver gone' }]);
    expect(await claimJobs(h.deps, [{ kind, limit: 10 }])).toEqual([]);
    expect(await jobRow(h, id!)).toMatchObject({
      status: 'failed',
      attempts: 0,
      last_error: 'receiver gone',
    });
    expect(noted.ended).toEqual([{ id, error: 'receiver gone' }]);
  });

  it('claims only the kinds asked for, in due order, up to the limit', async () => {
    const echo = testKind();
    const other = testKind({ kind: 'test.other' });
    const ids = await enqueueJobs(h, 'test.echo', [{ n: 1 }, { n: 2 }, { n: 3 }]);
    await enqueueJobs(h, 'test.other', [{ n: 4 }]);
    const claimed = await claimJobs(h.deps, [{ kind: echo.kind, limit: 2 }]);
    expect(claimed.map((task) => task.job.id)).toEqual(ids.slice(0, 2));
    expect(other.noted.prepared).toEqual([]);
  });

  onSqlite.it(
    'reads the due jobs through the jobs_due index, in index order (EXPLAIN QUERY PLAN)',
    () => {
      const compiled = dueJobsQuery(h.deps.db, 'webhook.delivery', h.now(), 16).compile();
      const plan = sqliteHandle(h.runtime.database)
        .prepare(`EXPLAIN QUERY PLAN ${compiled.sql}`)
        .all(...(compiled.parameters as unknown[]))
        .map((row) => (row as { detail: string }).detail);
      expect(plan).toEqual([
        expect.stringMatching(
          /^SEARCH jobs USING INDEX jobs_due \(kind=\? AND status=\? AND run_at<\?\)$/,
        ),
      ]);
      // No sort step: the index gives run_at, then rowid, order.
      expect(plan.join('\n')).not.toMatch(/TEMP B-TREE/);
    },
  );
});

describe('recording results', () => {
  it('records nothing but the kind facts for a result whose allocation id no longer holds the job', async () => {
    const { kind, noted } = testKind({ leaseMs: 1_000 });
    const [id] = await enqueueJobs(h, 'test.echo', [{}]);
    const [first] = await claimJobs(h.deps, [{ kind, limit: 1 }]);
    h.clock.advance(1_000);
    const [second] = await claimJobs(h.deps, [{ kind, limit: 1 }]);
    const delays = () => [1_000];
    expect(await recordResults(h.deps, delays, [await first!.execute()])).toEqual(['lease_lost']);
    expect(await jobRow(h, id!)).toMatchObject({
      status: 'pending',
      attempts: 2,
      lease_id: second!.job.leaseId,
    });
    expect(await recordResults(h.deps, delays, [await second!.execute()])).toEqual(['done']);
    expect(await jobRow(h, id!)).toMatchObject({ status: 'done', lease_id: null });
    expect(noted.recorded.map((r) => r.state)).toEqual(['lease_lost', 'done']);
  });

  it('retries each kind on its own schedule, then fails the job after its last attempt', async () => {
    const fast = testKind({ kind: 'test.fast', retryDelaysMs: [100, 200], run: async () => 'no' });
    const slow = testKind({ kind: 'test.slow', retryDelaysMs: [5_000], run: async () => 'no' });
    const runner = startRunner(h.deps, [fast.kind, slow.kind], { poll: false });
    const [fastId] = await enqueueJobs(h, 'test.fast', [{}], 4);
    const [slowId] = await enqueueJobs(h, 'test.slow', [{}], 3);
    const start = h.clock.now().getTime();
    const at = (ms: number) => new Date(start + ms).toISOString();

    await runner.drain();
    expect(await jobRow(h, fastId!)).toMatchObject({ attempts: 1, run_at: at(100) });
    expect(await jobRow(h, slowId!)).toMatchObject({ attempts: 1, run_at: at(5_000) });
    h.clock.advance(100);
    await runner.drain();
    expect(await jobRow(h, fastId!)).toMatchObject({ attempts: 2, run_at: at(300) });
    h.clock.advance(200);
    await runner.drain();
    // The last delay repeats.
    expect(await jobRow(h, fastId!)).toMatchObject({ attempts: 3, run_at: at(500) });
    h.clock.advance(200);
    await runner.drain();
    expect(await jobRow(h, fastId!)).toMatchObject({
      status: 'failed',
      attempts: 4,
      last_error: 'no',
      lease_id: null,
    });
    expect(await jobRow(h, slowId!)).toMatchObject({ status: 'pending', attempts: 1 });
    h.clock.advance(4_500);
    await runner.drain();
    expect(await jobRow(h, slowId!)).toMatchObject({ attempts: 2, run_at: at(10_000) });
    await runner.stop();
  });

  it('records the results that arrive together in one transaction (group commit)', async () => {
    const release = gate();
    const { kind, noted } = testKind({
      concurrency: 10,
      run: async () => {
        await release.promise;
        return 'ok';
      },
    });
    const ids = await enqueueJobs(
      h,
      'test.echo',
      Array.from({ length: 10 }, (_, n) => ({ n })),
    );
    const runner = startRunner(h.deps, [kind], { poll: false });
    const draining = runner.drain();
    await until(
      async () => (await jobRow(h, ids.at(-1)!)).attempts === 1,
      () => 'the ten jobs to be claimed',
    );
    release.open();
    await draining;
    expect(noted.recorded).toHaveLength(10);
    expect(noted.recorded.every((r) => r.state === 'done')).toBe(true);
    expect(new Set(noted.recorded.map((r) => r.trx)).size).toBe(1);
    await runner.stop();
  });
});

describe('the runner', () => {
  it('runs at most `concurrency` jobs of a kind at once, each kind on its own slots', async () => {
    const release = gate();
    const running = new Map<string, number>();
    const most = new Map<string, number>();
    const started = { count: 0, all: gate() };
    const handler = (name: string) => async () => {
      running.set(name, (running.get(name) ?? 0) + 1);
      most.set(name, Math.max(most.get(name) ?? 0, running.get(name)!));
      if (++started.count === 3) started.all.open();
      await release.promise;
      running.set(name, running.get(name)! - 1);
      return 'ok';
    };
    const two = testKind({ kind: 'test.two', concurrency: 2, run: handler('test.two') });
    const one = testKind({ kind: 'test.one', concurrency: 1, run: handler('test.one') });
    await enqueueJobs(h, 'test.two', [{}, {}, {}, {}, {}]);
    await enqueueJobs(h, 'test.one', [{}, {}, {}]);
    const runner = startRunner(h.deps, [two.kind, one.kind], { sleep: neverEnding });
    // Two of one kind and one of the other started; no other job starts until one ends.
    await started.all.promise;
    await new Promise((resolve) => setImmediate(resolve));
    expect(Object.fromEntries(running)).toEqual({ 'test.two': 2, 'test.one': 1 });
    const idle = runner.whenIdle();
    release.open();
    await idle;
    expect(Object.fromEntries(most)).toEqual({ 'test.two': 2, 'test.one': 1 });
    expect(two.noted.recorded).toHaveLength(5);
    expect(one.noted.recorded).toHaveLength(3);
    await runner.stop();
  });

  it('claims no more jobs of a kind than it has free slots: a job behind a running one stays unclaimed', async () => {
    const release = gate();
    const begun = gate();
    const { kind } = testKind({
      concurrency: 1,
      run: async () => {
        begun.open();
        await release.promise;
        return 'ok';
      },
    });
    const [running, behind] = await enqueueJobs(h, 'test.echo', [{ n: 1 }, { n: 2 }]);
    const runner = startRunner(h.deps, [kind], { sleep: neverEnding });
    await begun.promise;
    // A few turns of the loop: the second job is still not leased (no lease to expire, no
    // attempt counted while it waits).
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(await jobRow(h, behind!)).toMatchObject({
      status: 'pending',
      attempts: 0,
      lease_id: null,
    });
    const idle = runner.whenIdle();
    release.open();
    await idle;
    expect(await jobRow(h, running!)).toMatchObject({ status: 'done', attempts: 1 });
    expect(await jobRow(h, behind!)).toMatchObject({ status: 'done', attempts: 1 });
    await runner.stop();
  });

  it('abandons a run that nears the end of its lease: its slot frees and the attempt counts as failed', async () => {
    const hung = new Promise<string>(() => {});
    let calls = 0;
    const { kind, noted } = testKind({
      concurrency: 1,
      leaseMs: 2_000,
      retryDelaysMs: [60_000],
      run: async (payload) => {
        calls += 1;
        return (payload as { hang?: boolean }).hang ? hung : 'ok';
      },
    });
    const [stuck, next] = await enqueueJobs(h, 'test.echo', [{ hang: true }, {}]);
    const runner = startRunner(h.deps, [kind], { sleep: neverEnding });
    await until(
      () => noted.recorded.length === 2,
      () => `both jobs recorded (so far ${JSON.stringify(noted.recorded)})`,
      20_000,
    );
    await runner.stop();
    expect(calls).toBe(2);
    expect(await jobRow(h, stuck!)).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_error: 'the run did not end within 1800 ms; abandoned',
    });
    expect(await jobRow(h, next!)).toMatchObject({ status: 'done', attempts: 1 });
  });

  it('wakes on a job enqueued in its process, and finds by polling one written elsewhere', async () => {
    const { kind, noted } = testKind();
    const sleeps: (() => void)[] = [];
    const sleep = (_ms: number, signal: AbortSignal) =>
      new Promise<void>((resolve) => {
        sleeps.push(resolve);
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
    const runner = startRunner(h.deps, [kind], { sleep });
    await runner.whenIdle();
    // Enqueued here: the write wakes the runner.
    let idle = runner.whenIdle();
    const [woken] = await enqueueJobs(h, 'test.echo', [{}]);
    await idle;
    expect(noted.recorded.map((r) => r.id)).toEqual([woken]);
    // Written by another process (a plain insert, no wake-up): found at the next poll.
    const other = await h.deps.db
      .insertInto('jobs')
      .values({
        kind: 'test.echo',
        payload: '{}',
        status: 'pending',
        attempts: 0,
        max_attempts: 1,
        run_at: h.now(),
        created_at: h.now(),
        updated_at: h.now(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect(noted.recorded).toHaveLength(1);
    idle = runner.whenIdle();
    sleeps.at(-1)!();
    await idle;
    expect(noted.recorded.map((r) => r.id)).toEqual([woken, other.id]);
    await runner.stop();
  });
});
