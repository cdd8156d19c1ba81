/**
 * The one API between the agent's windows and the process that owns them (Electron's main
 * process through the preload's contextBridge; the test harness through a Playwright binding).
 * Types and channel names only: the renderer, the preload and the main process import it.
 */
import type { PinQuestion, SignConsent } from '../core/prompts';

export type Language = 'vi' | 'en';

/** What a window is for, with what it shows. */
export type WindowRequest =
  | { kind: 'approveOrigin'; language: Language; origin: string }
  | { kind: 'confirmSign'; language: Language; consent: SignConsent }
  | { kind: 'askPin'; language: Language; question: PinQuestion }
  | { kind: 'settings'; language: Language };

export type PromptKind = Exclude<WindowRequest['kind'], 'settings'>;

/** A prompt's answer: yes/no for approval and consent, the PIN (null: cancelled) for askPin. */
export type PromptAnswer = boolean | string | null;

export interface ModuleView {
  label: string;
  path: string;
  enabled: boolean;
  builtIn: boolean;
  state: 'absent' | 'loaded' | 'failed' | 'disabled';
  reason?: string;
}

export interface SettingsView {
  version: string;
  language: Language;
  startAtLogin: boolean;
  tsaUrl: string | null;
  modules: ModuleView[];
  allowedOrigins: string[];
  ticketServers: string[];
}

export type SettingsChange =
  | { type: 'language'; language: Language }
  | { type: 'startAtLogin'; enabled: boolean }
  | { type: 'tsaUrl'; url: string | null }
  | { type: 'moduleEnabled'; path: string; enabled: boolean }
  | { type: 'addModule'; label: string; path: string }
  | { type: 'revokeOrigin'; origin: string }
  | { type: 'forgetTicketKeys'; server: string };

/** The answer of "test this module": what loading it gave and the tokens it sees now. */
export interface ModuleTest {
  state: ModuleView['state'];
  reason?: string;
  tokens: { label: string; serialNumber: string }[];
}

/** What the preload exposes as `window.esignAgent`: nothing else of Electron or Node. */
export interface AgentShellApi {
  request(): Promise<WindowRequest>;
  /** Answers this approval, consent or PIN window; it closes afterwards. */
  answer(answer: PromptAnswer): Promise<void>;
  settings(): Promise<SettingsView>;
  /** Applies one change; the answer is the settings after it, or the refusal's reason. */
  changeSettings(change: SettingsChange): Promise<SettingsView | { error: string }>;
  testModule(path: string): Promise<ModuleTest>;
}

export const SHELL_API_NAME = 'esignAgent';

/** IPC channels, one per API method. */
export const SHELL_CHANNELS = {
  request: 'esign:request',
  answer: 'esign:answer',
  settings: 'esign:settings',
  changeSettings: 'esign:change-settings',
  testModule: 'esign:test-module',
} as const satisfies Record<keyof AgentShellApi, string>;
