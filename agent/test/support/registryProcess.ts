/**
 * A TokenRegistry alone in a child process with SOFTHSM2_CONF set (see agentProcess.ts), for the
 * slot-event tests. Writes JSON lines: {event:'ready', tokens, modes, probe} where `probe` is what
 * a non-blocking C_WaitForSlotEvent on the real module answered, then {event:'changed', tokens,
 * modes} at each change. Closing stdin stops it; with `initializedByAnother` it then writes
 * {event:'closed', anotherStillWorks} (whether that library can still use the module).
 * Usage: node --import tsx registryProcess.ts <json {module, pollIntervalMs, slotEventTickMs}>
 */
import readline from 'node:readline';
import { Module } from 'graphene-pk11';
import { drainSlotEvents } from '../../src/core/pkcs11/slotEvents';
import { TokenRegistry } from '../../src/core/pkcs11/tokenRegistry';

interface Args {
  module: string;
  pollIntervalMs: number;
  slotEventTickMs: number;
  /** Another library in the process initializes the module first (and uses it after). */
  initializedByAnother?: boolean;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const report = (event: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify(event)}\n`);

/** The answer of a module loaded on its own, so the registry's own event state is untouched. */
function probe(): string {
  const module = Module.load(args.module);
  module.initialize();
  try {
    return drainSlotEvents(module.lib);
  } finally {
    module.finalize();
  }
}

async function main() {
  const answer = probe();
  const another = args.initializedByAnother ? Module.load(args.module) : undefined;
  another?.initialize();
  const registry = new TokenRegistry({
    modules: () => [{ label: 'SoftHSM2', path: args.module }],
    pollIntervalMs: args.pollIntervalMs,
    slotEventTickMs: args.slotEventTickMs,
    log: (message) => process.stderr.write(`registry: ${message}\n`),
  });
  const labels = () => registry.tokens().map((token) => token.label);
  registry.onChange(() =>
    report({ event: 'changed', tokens: labels(), modes: registry.slotEventModes() }),
  );
  await registry.start();
  report({ event: 'ready', tokens: labels(), modes: registry.slotEventModes(), probe: answer });
  for await (const _ of readline.createInterface({ input: process.stdin })) {
    // Nothing is read: the end of stdin is the stop signal.
  }
  await registry.close();
  if (another) {
    let anotherStillWorks = true;
    try {
      another.getSlots(true);
    } catch {
      anotherStillWorks = false;
    }
    report({ event: 'closed', anotherStillWorks });
  }
  process.exit(0);
}

void main();
