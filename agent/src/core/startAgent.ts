/**
 * The one start-up of the agent, shared by the Electron shell and the headless mode: the
 * settings file read, the core started with the spent-ticket file and the user's intermediates
 * beside it, and changed settings written back the way the caller owns them.
 */
import { type AgentCore, startAgentCore } from './agentCore';
import { bundledIntermediatesDirectory } from './chain';
import type { UserPrompts } from './prompts';
import {
  type AgentHostInfo,
  type AgentSettings,
  currentHost,
  intermediatesDirectory,
  loadSettings,
  saveSettings,
  settingsFilePath,
  spentTicketsFile,
} from './settings';

export interface AgentStartOptions {
  /** The settings file; default the user's (`settingsFilePath`). */
  settingsFile?: string;
  /**
   * What a change of the core (an approval, a revocation, a pinned ticket key) writes back:
   * the whole settings (the desktop, where the user owns them), or only the pinned ticket keys
   * into the file as it is on disk (headless: the policy's overrides stay in memory).
   */
  persist: 'settings' | 'ticketKeys';
  /** Changes made in memory once the settings are read (the headless policy's rules). */
  override?(settings: AgentSettings): void;
  /** The user's answers, given the settings they run with (the windows follow its language). */
  prompts(settings: AgentSettings): UserPrompts;
  /** The bundled intermediate certificates; default the agent's own folder (unpackaged). */
  bundledIntermediates?: string;
  version: string;
  log(message: string): void;
}

export interface StartedAgent {
  core: AgentCore;
  /** The settings the core runs with (changed in place). */
  settings: AgentSettings;
  host: AgentHostInfo;
  /** Writes the settings back as `persist` says. */
  save(settings: AgentSettings): Promise<void>;
}

/** Keeps the file on disk and writes into it only the pinned ticket keys, when they changed. */
function saveTicketKeys(file: string, host: AgentHostInfo) {
  return async (changed: AgentSettings): Promise<void> => {
    const onDisk = await loadSettings(file, host);
    const pins = JSON.stringify(changed.pinnedTicketKeys);
    if (JSON.stringify(onDisk.pinnedTicketKeys) === pins) return;
    onDisk.pinnedTicketKeys = JSON.parse(pins) as AgentSettings['pinnedTicketKeys'];
    await saveSettings(file, onDisk);
  };
}

/**
 * Reads the settings and starts the core. A settings file that is not valid and ports all
 * taken are ConfigurationErrors, for the caller to show.
 */
export async function startAgent(options: AgentStartOptions): Promise<StartedAgent> {
  const host = currentHost();
  const settingsFile = options.settingsFile ?? settingsFilePath(host);
  const settings = await loadSettings(settingsFile, host);
  options.override?.(settings);
  const save =
    options.persist === 'settings'
      ? (changed: AgentSettings) => saveSettings(settingsFile, changed)
      : saveTicketKeys(settingsFile, host);
  const core = await startAgentCore({
    settings,
    save,
    prompts: options.prompts(settings),
    spentTicketsFile: spentTicketsFile(settingsFile),
    intermediateFolders: [
      options.bundledIntermediates ?? bundledIntermediatesDirectory(),
      intermediatesDirectory(settingsFile),
    ],
    version: options.version,
    log: options.log,
  });
  return { core, settings, host, save };
}
