/**
 * The agent core under plain Node for the tests, in a child process with SOFTHSM2_CONF set
 * (jest gives a test file only a copy of the environment). The user is a policy file, read at
 * each question so a test can change its answers: {approveOrigins, confirm, pins: {label: pin},
 * hold: [question kinds]}; a question whose kind is in `hold` waits until the policy no longer
 * holds it. Spent ticket nonces go in the file beside the settings, as in the real agent.
 * Writes one JSON line per event on stdout: {event:'ready', port}, {event:'prompt', ...},
 * {event:'failed', message} when the core cannot start. Lines on stdin are commands the
 * settings page would give: {"revoke": origin} (answered {event:'revoked', origin}).
 * Closing stdin stops the agent.
 * Usage: node --import tsx agentProcess.ts <json {settingsFile, policyFile, intermediateFolders, ports}>
 */
import fs from 'node:fs';
import readline from 'node:readline';
import { appendRunLog } from '../../../test/support/runLog';
import {
  currentHost,
  loadSettings,
  saveSettings,
  spentTicketsFile,
  startAgentCore,
} from '../../src/core';
import { SettingsService } from '../../src/shell/settingsService';

interface Args {
  settingsFile: string;
  policyFile: string;
  intermediateFolders: string[];
  ports: number[];
}

interface Policy {
  approveOrigins: string[];
  confirm: boolean;
  pins: Record<string, string | null>;
  hold?: ('confirmSign' | 'askPin')[];
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
/**
 * The policy as the test last wrote it. Tests rewrite the file while questions wait, and
 * writeFileSync truncates before it writes: a read that catches it half-written is read again.
 */
async function policy(): Promise<Policy> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return JSON.parse(fs.readFileSync(args.policyFile, 'utf8')) as Policy;
    } catch (error) {
      if (!(error instanceof SyntaxError) || attempt === 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}
const report = (event: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify(event)}\n`);

/** The policy once it no longer holds questions of this kind. */
async function released(kind: 'confirmSign' | 'askPin'): Promise<Policy> {
  for (;;) {
    const current = await policy();
    if (!current.hold?.includes(kind)) return current;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function main() {
  const host = currentHost();
  const settings = await loadSettings(args.settingsFile, host);
  const save = (changed: typeof settings) => saveSettings(args.settingsFile, changed);
  const core = await startAgentCore({
    settings,
    save,
    prompts: {
      approveOrigin: async (origin) => {
        report({ event: 'prompt', kind: 'approveOrigin', origin });
        return (await policy()).approveOrigins.includes(origin);
      },
      confirmSign: async (consent) => {
        report({ event: 'prompt', kind: 'confirmSign', consent });
        return (await released('confirmSign')).confirm;
      },
      askPin: async (question) => {
        report({ event: 'prompt', kind: 'askPin', question });
        return (await released('askPin')).pins[question.token.label] ?? null;
      },
    },
    spentTicketsFile: spentTicketsFile(args.settingsFile),
    intermediateFolders: args.intermediateFolders,
    version: '0.1.0-test',
    ports: args.ports,
    log: (message) => {
      process.stderr.write(`agent: ${message}\n`);
      appendRunLog('agent', `${message}\n`);
    },
  }).catch((error: unknown) => {
    report({ event: 'failed', message: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  });
  const service = new SettingsService({ settings, save, core, host, version: '0.1.0-test' });
  report({ event: 'ready', port: core.port });
  for await (const line of readline.createInterface({ input: process.stdin })) {
    const command = JSON.parse(line) as { revoke?: string };
    if (command.revoke !== undefined) {
      await service.change({ type: 'revokeOrigin', origin: command.revoke });
      report({ event: 'revoked', origin: command.revoke });
    }
  }
  await core.close();
  process.exit(0);
}

void main();
