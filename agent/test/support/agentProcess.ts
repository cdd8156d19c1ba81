/**
 * The agent core under plain Node for the tests, in a child process with SOFTHSM2_CONF set
 * (jest gives a test file only a copy of the environment). The user is a policy file, read at
 * each question so a test can change its answers: {approveOrigins, confirm, pins: {label: pin}}.
 * Writes one JSON line per event on stdout: {event:'ready', port}, {event:'prompt', ...}.
 * Closing stdin stops the agent.
 * Usage: node --import tsx agentProcess.ts <json {settingsFile, policyFile, intermediateFolders, ports}>
 */
import fs from 'node:fs';
import readline from 'node:readline';
import { currentHost, loadSettings, saveSettings, startAgentCore } from '../../src/core';

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
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const policy = (): Policy => JSON.parse(fs.readFileSync(args.policyFile, 'utf8')) as Policy;
const report = (event: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify(event)}\n`);

async function main() {
  const settings = await loadSettings(args.settingsFile, currentHost());
  const core = await startAgentCore({
    settings,
    save: (changed) => saveSettings(args.settingsFile, changed),
    prompts: {
      approveOrigin: async (origin) => {
        report({ event: 'prompt', kind: 'approveOrigin', origin });
        return policy().approveOrigins.includes(origin);
      },
      confirmSign: async (consent) => {
        report({ event: 'prompt', kind: 'confirmSign', consent });
        return policy().confirm;
      },
      askPin: async (question) => {
        report({ event: 'prompt', kind: 'askPin', question });
        return policy().pins[question.token.label] ?? null;
      },
    },
    intermediateFolders: args.intermediateFolders,
    version: '0.1.0-test',
    ports: args.ports,
    log: (message) => process.stderr.write(`agent: ${message}\n`),
  });
  report({ event: 'ready', port: core.port });
  for await (const _ of readline.createInterface({ input: process.stdin })) {
    // Nothing is read: the end of stdin is the stop signal.
  }
  await core.close();
  process.exit(0);
}

void main();
