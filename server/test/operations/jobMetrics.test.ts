import { claimJobs, recordResults } from '../../src/jobs/queue';
import { enqueueJobs, testKind } from '../jobs/fixtures';
import { createHarness, type Harness } from '../support/harness';
import { sample } from './prometheus';

/**
 * The queue's metrics: its depth and given-up jobs per kind read from the jobs table at each
 * scrape, and each failed attempt counted once, as a retry or as the end (a job refused at
 * claim included).
 */

const token = 'metrics-test-token-0123456789';
const kindName = 'test.metrics';

let h: Harness;
beforeEach(() => {
  h = createHarness({ METRICS_TOKEN: token });
});
afterEach(() => h.close());

async function scrape(): Promise<string> {
  const response = await h.request('GET', '/metrics', {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(response.status).toBe(200);
  return response.text();
}

it('pending and failed jobs per kind, and failed attempts by outcome', async () => {
  const { kind } = testKind({ kind: kindName, retryDelaysMs: [1_000], run: async () => 'boom' });
  const failures = (text: string, outcome: string) =>
    sample(text, 'esign_job_failures_total', { kind: kindName, outcome }) ?? 0;
  const start = await scrape();
  await enqueueJobs(h, kindName, [{ n: 1 }, { refuse: 'not for us' }], 2);

  const queued = await scrape();
  expect(sample(queued, 'esign_jobs_pending', { kind: kindName })).toBe(2);
  expect(sample(queued, 'esign_jobs_failed', { kind: kindName })).toBe(0);

  // First attempt: the refused job ends at claim, the other fails and waits a second.
  const delays = () => [1_000];
  const first = await claimJobs(h.deps, [{ kind, limit: 10 }]);
  expect(first).toHaveLength(1);
  expect(await recordResults(h.deps, delays, [await first[0]!.execute()])).toEqual(['retry']);
  const retried = await scrape();
  expect(failures(retried, 'retry') - failures(start, 'retry')).toBe(1);
  expect(failures(retried, 'failed') - failures(start, 'failed')).toBe(1);
  expect(sample(retried, 'esign_jobs_pending', { kind: kindName })).toBe(1);
  expect(sample(retried, 'esign_jobs_failed', { kind: kindName })).toBe(1);

  // Second and last attempt.
  h.clock.advance(1_000);
  const second = await claimJobs(h.deps, [{ kind, limit: 10 }]);
  expect(await recordResults(h.deps, delays, [await second[0]!.execute()])).toEqual(['failed']);
  const ended = await scrape();
  expect(failures(ended, 'retry') - failures(start, 'retry')).toBe(1);
  expect(failures(ended, 'failed') - failures(start, 'failed')).toBe(2);
  expect(sample(ended, 'esign_jobs_pending', { kind: kindName })).toBe(0);
  expect(sample(ended, 'esign_jobs_failed', { kind: kindName })).toBe(2);
});
