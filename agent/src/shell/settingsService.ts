import { z } from 'zod';
import type { AgentCore } from '../core/agentCore';
import { type AgentHostInfo, type AgentSettings, checkSettings } from '../core/settings';
import type { Language, ModuleTest, ModuleView, SettingsChange, SettingsView } from './api';

export interface SettingsServiceOptions {
  /** The settings object the core runs with: changes apply to it in place. */
  settings: AgentSettings;
  save(settings: AgentSettings): Promise<void>;
  core: Pick<AgentCore, 'registry' | 'approvals'>;
  host: AgentHostInfo;
  version: string;
  /** The shell follows: tray menu language, login item. */
  onLanguage?(language: Language): void;
  onStartAtLogin?(enabled: boolean): void;
}

// Changes come from a renderer: checked like any input from outside.
const changeSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('language'), language: z.enum(['vi', 'en']) }),
  z.object({ type: z.literal('startAtLogin'), enabled: z.boolean() }),
  z.object({ type: z.literal('tsaUrl'), url: z.string().max(2048).nullable() }),
  z.object({ type: z.literal('moduleEnabled'), path: z.string().max(4096), enabled: z.boolean() }),
  z.object({
    type: z.literal('addModule'),
    label: z.string().max(200),
    path: z.string().max(4096),
  }),
  z.object({ type: z.literal('revokeOrigin'), origin: z.string().max(2048) }),
  z.object({ type: z.literal('forgetTicketKeys'), server: z.string().max(2048) }),
]) satisfies z.ZodType<SettingsChange>;

/** The settings page's view of the settings and its changes, each checked and saved at once. */
export class SettingsService {
  constructor(private readonly options: SettingsServiceOptions) {}

  view(): SettingsView {
    const { settings } = this.options;
    const states = new Map(
      this.options.core.registry.moduleStates().map((state) => [state.path, state]),
    );
    const modules = settings.pkcs11Modules.map((module): ModuleView => {
      const state = states.get(module.path);
      if (!module.enabled || !state) return { ...module, state: 'disabled' };
      return state.state === 'failed'
        ? { ...module, state: 'failed', reason: state.reason }
        : { ...module, state: state.state };
    });
    return {
      version: this.options.version,
      language: settings.language,
      startAtLogin: settings.startAtLogin,
      tsaUrl: settings.tsaUrl,
      modules,
      allowedOrigins: [...settings.allowedOrigins],
      ticketServers: [...settings.ticketServers],
    };
  }

  async change(input: unknown): Promise<SettingsView | { error: string }> {
    const parsed = changeSchema.safeParse(input);
    if (!parsed.success) return { error: 'not a settings change' };
    const change = parsed.data;
    const { settings } = this.options;
    if (change.type === 'revokeOrigin') {
      await this.options.core.approvals.revoke(change.origin);
      return this.view();
    }
    const next: AgentSettings = structuredClone(settings);
    if (change.type === 'language') next.language = change.language;
    if (change.type === 'startAtLogin') next.startAtLogin = change.enabled;
    if (change.type === 'tsaUrl') next.tsaUrl = change.url?.trim() || null;
    if (change.type === 'moduleEnabled') {
      next.pkcs11Modules = next.pkcs11Modules.map((module) =>
        module.path === change.path ? { ...module, enabled: change.enabled } : module,
      );
    }
    if (change.type === 'addModule') {
      next.pkcs11Modules.push({
        label: change.label,
        path: change.path,
        enabled: true,
        builtIn: false,
        avoidMechanisms: [],
      });
    }
    if (change.type === 'forgetTicketKeys') delete next.pinnedTicketKeys[change.server];
    const checked = checkSettings(next, this.options.host);
    if (!checked.ok) return { error: checked.reason };
    Object.assign(settings, checked.settings);
    await this.options.save(settings);
    if (change.type === 'language') this.options.onLanguage?.(change.language);
    if (change.type === 'startAtLogin') this.options.onStartAtLogin?.(change.enabled);
    if (change.type === 'moduleEnabled' || change.type === 'addModule') {
      await this.options.core.registry.refresh();
    }
    return this.view();
  }

  /** Loads the module now if it can be, and says what it sees. */
  async testModule(path: unknown): Promise<ModuleTest> {
    const module = this.options.settings.pkcs11Modules.find((entry) => entry.path === path);
    if (!module) return { state: 'absent', reason: 'not in the settings', tokens: [] };
    await this.options.core.registry.refresh();
    const view = this.view().modules.find((entry) => entry.path === module.path)!;
    return {
      state: view.state,
      ...(view.reason !== undefined ? { reason: view.reason } : {}),
      tokens: this.options.core.registry
        .tokens()
        .filter((token) => token.module === module.label)
        .map((token) => ({ label: token.label, serialNumber: token.serialNumber })),
    };
  }
}
