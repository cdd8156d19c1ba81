import { spawn } from 'node:child_process';
import path from 'node:path';
import { databaseEnv } from '../../../test/support/postgres';
import { runLogDirVariable } from '../../../test/support/runLog';
import { ManualClock } from '../../src/platform/clock';
import { openRuntime } from '../../src/runtime';
import { expireOverdueTasks, startDeadlineScheduler } from '../../src/workflow/deadlines';
import { repoRoot } from '../admin/runCli';
import {
  approveOpenTask,
  createDossier,
  createProcess,
  dossierRow,
  historyOf,
} from '../support/dossiers';
import { testLogger } from '../support/testLogger';
import { accountOf, day, guestAnh, useWorkflowWorld } from './world';

const hour = 3600_000;

/** Polls `check` until it holds (the scheduler runs on its own timer); no timing is asserted. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('condition not reached');
}

describe('Deadlines: waiting tasks past expireAt move the dossier to EXPIRED', () => {
  const context = useWorkflowWorld();

  it('expires nothing before the deadline and the task exactly at it', async () => {
    const { h, world } = context;
    const dossier = await createDossier(h, world.process, {
      signers: [guestAnh, { stepCode: 'DUYET', userId: world.hung.row.id }],
    });
    h.clock.advance(day * 1000 - 1);
    expect(await expireOverdueTasks(h.deps)).toBe(0);
    expect((await dossierRow(h, dossier.id)).status).toBe('PENDING_SIGN');
    h.clock.advance(1);
    expect(await expireOverdueTasks(h.deps)).toBe(1);
    expect((await dossierRow(h, dossier.id)).status).toBe('EXPIRED');
  });

  it('is idempotent: a second pass writes nothing and the history has one OVERDUE record', async () => {
    const { h, world } = context;
    const dossier = await createDossier(h, world.process, {
      signers: [guestAnh, { stepCode: 'DUYET', userId: world.hung.row.id }],
    });
    h.clock.advance(2 * day * 1000);
    expect(await expireOverdueTasks(h.deps)).toBe(1);
    expect(await expireOverdueTasks(h.deps)).toBe(0);
    expect((await historyOf(h, dossier.id)).map((row) => row.action)).toEqual(['OVERDUE']);
  });

  it('never expires a step without a deadline', async () => {
    const { h, world } = context;
    const dossier = await createDossier(h, world.process, {
      signers: [guestAnh, { stepCode: 'DUYET', userId: world.hung.row.id }],
    });
    const anh = await accountOf(h, guestAnh.identityNumber);
    await approveOpenTask(h, dossier.id, anh.id);
    h.clock.advance(365 * day * 1000);
    expect(await expireOverdueTasks(h.deps)).toBe(0);
    expect((await dossierRow(h, dossier.id)).status).toBe('IN_PROGRESS');
  });

  it('two processes expiring at once (two real processes on one DATA_DIR) expire each task once', async () => {
    const { h, world } = context;
    const dossiers = [];
    for (let index = 0; index < 5; index += 1) {
      dossiers.push(
        await createDossier(h, world.process, {
          signers: [guestAnh, { stepCode: 'DUYET', userId: world.hung.row.id }],
        }),
      );
    }
    h.clock.advance(2 * day * 1000);
    const pass = () =>
      new Promise<number>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          ['--import', 'tsx', path.join(__dirname, 'expireProcess.ts')],
          {
            cwd: repoRoot,
            env: {
              PATH: process.env.PATH,
              // Its log joins the jest run's (support/testLogger.ts).
              [runLogDirVariable]: process.env[runLogDirVariable],
              DATA_DIR: h.dataDir,
              APP_ENV: 'development',
              NOW: h.now(),
              ...databaseEnv(h.dataDir),
            },
            stdio: ['ignore', 'pipe', 'inherit'],
          },
        );
        let output = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          output += chunk;
        });
        child.on('error', reject);
        child.on('close', (code) =>
          code === 0 ? resolve(Number(output.trim())) : reject(new Error(`exit ${code}`)),
        );
      });
    const counts = await Promise.all([pass(), pass()]);
    expect(counts[0]! + counts[1]!).toBe(5);
    for (const dossier of dossiers) {
      expect((await historyOf(h, dossier.id)).map((row) => row.action)).toEqual(['OVERDUE']);
      expect((await dossierRow(h, dossier.id)).status).toBe('EXPIRED');
    }
  });
});

describe('Deadline scheduler', () => {
  const context = useWorkflowWorld();

  it('catches up at start after a restart: a fresh runtime on the same data directory expires what fell due while down', async () => {
    const { h, world } = context;
    const dossier = await createDossier(h, world.process, {
      signers: [guestAnh, { stepCode: 'DUYET', userId: world.hung.row.id }],
    });
    // The server is down for three days; a new process starts on the same DATA_DIR.
    const restarted = openRuntime(h.deps.config, {
      clock: new ManualClock(new Date(h.clock.now().getTime() + 3 * day * 1000)),
      logger: testLogger(),
    });
    try {
      const scheduler = startDeadlineScheduler(restarted.deps, 60 * 60 * 1000);
      await scheduler.stop();
    } finally {
      await restarted.database.close();
    }
    // Time moved on for every instance (the scheduler's period is claimed by the clock).
    h.clock.set(restarted.deps.clock.now());
    const row = await dossierRow(h, dossier.id);
    expect([row.status, row.expired_at]).toEqual(['EXPIRED', '2026-11-26T08:00:00.000Z']);
    expect(
      (await historyOf(h, dossier.id)).map((entry) => [entry.action, entry.action_at]),
    ).toEqual([['OVERDUE', '2026-11-26T08:00:00.000Z']]);
  });

  it('runs again on its interval until stopped', async () => {
    const { h, world } = context;
    const process = await createProcess(h, {
      tenantId: world.acme.id,
      organizationId: world.rootId,
      code: 'QUICK',
      steps: [
        {
          stepCode: 'XL',
          kind: 'internal',
          defaultUserId: world.hung.row.id,
          deadlineSeconds: 3600,
        },
      ],
    });
    const dossier = await createDossier(h, process, {});
    const scheduler = startDeadlineScheduler(h.deps, 5);
    try {
      expect((await dossierRow(h, dossier.id)).status).toBe('PENDING_SIGN');
      h.clock.advance(hour);
      await eventually(async () => (await dossierRow(h, dossier.id)).status === 'EXPIRED');
    } finally {
      await scheduler.stop();
    }
    expect((await historyOf(h, dossier.id)).map((row) => [row.action, row.actor_username])).toEqual(
      [['OVERDUE', 'hung']],
    );
  });
});
