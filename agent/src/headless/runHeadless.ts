import {
  type AgentCore,
  bundledIntermediatesDirectory,
  currentHost,
  intermediatesDirectory,
  loadSettings,
  saveSettings,
  settingsFilePath,
  spentTicketsFile,
  startAgentCore,
} from '../core';
import { loadPolicy, policyPrompts } from './policy';

export interface HeadlessOptions {
  policyFile: string;
  version: string;
  log(message: string): void;
  env?: NodeJS.ProcessEnv;
}

/**
 * The agent core under plain Node, the user replaced by a policy file: for tests and for
 * unattended signing servers with a token. The settings file is read, never rewritten, except
 * to pin a signing server's ticket keys; the policy's origins and ticket rules live in memory.
 */
export async function runHeadless(options: HeadlessOptions): Promise<AgentCore> {
  const policy = await loadPolicy(options.policyFile);
  const host = currentHost();
  const settingsFile = policy.settingsFile ?? settingsFilePath(host);
  const settings = await loadSettings(settingsFile, host);
  settings.ticketServers = [...new Set([...settings.ticketServers, ...policy.ticketServers])];
  settings.requireTicket = policy.requireTicket;
  return startAgentCore({
    settings,
    save: async (changed) => {
      const onDisk = await loadSettings(settingsFile, host);
      const pins = JSON.stringify(changed.pinnedTicketKeys);
      if (JSON.stringify(onDisk.pinnedTicketKeys) === pins) return;
      onDisk.pinnedTicketKeys = JSON.parse(pins) as typeof onDisk.pinnedTicketKeys;
      await saveSettings(settingsFile, onDisk);
    },
    prompts: policyPrompts(policy, options.log, options.env),
    spentTicketsFile: spentTicketsFile(settingsFile),
    intermediateFolders: [bundledIntermediatesDirectory(), intermediatesDirectory(settingsFile)],
    version: options.version,
    log: options.log,
  });
}
