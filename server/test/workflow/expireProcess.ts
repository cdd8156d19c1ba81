/**
 * A separate process that runs one deadline pass on DATA_DIR at the instant NOW (ISO), then
 * prints how many tasks it expired. The deadline tests start two at once.
 */
import { ManualClock } from '../../src/platform/clock';
import { loadConfig } from '../../src/platform/config';
import { openRuntime } from '../../src/runtime';
import { expireOverdueTasks } from '../../src/workflow/deadlines';
import { testLogger } from '../support/testLogger';

async function main(): Promise<void> {
  const runtime = openRuntime(loadConfig(process.env), {
    clock: new ManualClock(process.env.NOW ?? ''),
    logger: testLogger(),
  });
  try {
    process.stdout.write(`${await expireOverdueTasks(runtime.deps)}\n`);
  } finally {
    await runtime.database.close();
  }
}

void main();
