import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { startRunner } from '../../src/jobs/runner';
import {
  scheduleStorageSweep,
  storageSweepJob,
  storageSweepKind,
} from '../../src/storage/sweepJob';
import { registerTemplate } from '../../src/templates/service';
import { runCli } from '../admin/runCli';
import { createHarness, type Harness, seedTenant } from '../support/harness';
import { exampleTemplateFile, makePdf } from '../templates/fixtures';

jest.setTimeout(120_000);

const hourMs = 3_600_000;

/** A store with one replaced template (its old bytes orphaned) and one put no row ever named. */
async function storeWithOrphans(h: Harness) {
  const acme = await seedTenant(h, 'ACME');
  const tenant = await h.deps.db
    .selectFrom('tenants')
    .selectAll()
    .where('id', '=', acme.tenantId)
    .executeTakeFirstOrThrow();
  const register = async (pdfPath: string) =>
    (await registerTemplate(h.deps, tenant, 'ACME', { code: 'HD', name: 'Mẫu', pdfPath })).template;
  const old = await register(exampleTemplateFile);
  const replacement = path.join(h.dataDir, 'mau-moi.pdf');
  fs.writeFileSync(
    replacement,
    await makePdf((form, page) => form.createTextField('hoTen').addToPage(page, { x: 20, y: 300 })),
  );
  const current = await register(replacement);
  const loose = await h.deps.files.put(Readable.from(Buffer.from('never committed\n'.repeat(64))));
  h.deps.files.keep(loose);
  return {
    current: current.sha256,
    orphans: [
      { sha256: old.sha256, size: old.size },
      { sha256: loose.sha256, size: loose.size },
    ].sort((a, b) => a.sha256.localeCompare(b.sha256)),
  };
}

describe('admin storage sweep [--dry-run] against a real DATA_DIR', () => {
  let h: Harness;
  beforeAll(() => {
    h = createHarness();
  });
  afterAll(() => h.close());

  it('the dry run lists what it would delete and deletes nothing; the sweep deletes exactly that', async () => {
    // The harness clock is a day behind the CLI's real clock: every file is past the grace period.
    const { current, orphans } = await storeWithOrphans(h);
    const total = orphans[0]!.size + orphans[1]!.size;

    const dry = await runCli(h.dataDir, 'storage sweep --dry-run');
    expect(dry.code).toBe(0);
    for (const orphan of orphans) expect(dry.stdout).toContain(`would delete ${orphan.sha256}`);
    expect(dry.stdout).toContain('Would delete 2 unreferenced files');
    for (const orphan of orphans) expect(await h.deps.files.exists(orphan.sha256)).toBe(true);

    const dryJson = (await runCli(h.dataDir, 'storage sweep --dry-run --json')).json<{
      dryRun: boolean;
      deleted: number;
      deletedBytes: number;
    }>();
    expect(dryJson).toMatchObject({ dryRun: true, deleted: 2, deletedBytes: total });

    const swept = await runCli(h.dataDir, 'storage sweep --json');
    expect(swept.code).toBe(0);
    const report = swept.json<{
      dryRun: boolean;
      deleted: number;
      deletedBytes: number;
      deletedFiles: { sha256: string; size: number }[];
      kept: number;
    }>();
    expect(report).toMatchObject({ dryRun: false, deleted: 2, deletedBytes: total, kept: 1 });
    expect([...report.deletedFiles].sort((a, b) => a.sha256.localeCompare(b.sha256))).toEqual(
      orphans,
    );
    for (const orphan of orphans) expect(await h.deps.files.exists(orphan.sha256)).toBe(false);
    expect(await h.deps.files.exists(current)).toBe(true);

    const again = await runCli(h.dataDir, 'storage sweep');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Deleted 0 unreferenced files (0 B); kept 1');
  });

  it('is in the help text', async () => {
    const help = await runCli(h.dataDir, 'help');
    expect(help.stdout).toContain('admin storage sweep  [--dry-run]');
  });
});

describe('the daily sweep job', () => {
  let h: Harness;
  beforeAll(() => {
    h = createHarness();
  });
  afterAll(() => h.close());

  const sweepJobs = () =>
    h.deps.db
      .selectFrom('jobs')
      .select(['status', 'run_at'])
      .where('kind', '=', storageSweepKind)
      .orderBy('id')
      .execute();

  it('runs through the queue and enqueues the next a day later; one pending job whatever restarts do', async () => {
    const { orphans } = await storeWithOrphans(h);
    expect(await scheduleStorageSweep(h.deps)).toBe(true);
    expect(await scheduleStorageSweep(h.deps)).toBe(false);
    const runner = startRunner(h.deps, [storageSweepJob(h.deps)], { poll: false });
    try {
      // Still within the grace period: the first run deletes nothing.
      await runner.drain();
      for (const orphan of orphans) expect(await h.deps.files.exists(orphan.sha256)).toBe(true);
      const afterFirst = await sweepJobs();
      expect(afterFirst.map((job) => job.status)).toEqual(['done', 'pending']);
      expect(Date.parse(afterFirst[1]!.run_at) - h.clock.now().getTime()).toBe(24 * hourMs);
      expect(await scheduleStorageSweep(h.deps)).toBe(false);

      h.clock.advance(24 * hourMs);
      await runner.drain();
      for (const orphan of orphans) expect(await h.deps.files.exists(orphan.sha256)).toBe(false);
      expect((await sweepJobs()).map((job) => job.status)).toEqual(['done', 'done', 'pending']);
    } finally {
      await runner.stop();
    }
  });
});
