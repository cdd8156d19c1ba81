import { type AgentCore, startAgent } from '../core';
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
  const { core } = await startAgent({
    ...(policy.settingsFile !== undefined ? { settingsFile: policy.settingsFile } : {}),
    persist: 'ticketKeys',
    override: (settings) => {
      settings.ticketServers = [...new Set([...settings.ticketServers, ...policy.ticketServers])];
      settings.requireTicket = policy.requireTicket;
    },
    prompts: () => policyPrompts(policy, options.log, options.env),
    version: options.version,
    log: options.log,
  });
  return core;
}
