import { agent as en } from '@esign/shared/messages/en/agent';
import { agent as vi } from '@esign/shared/messages/vi/agent';
import type { Language } from './api';

/** The shell's texts (shared/src/messages/<language>/agent.ts), by key. */
export type MessageKey = keyof typeof vi.shell;

const catalogues: Record<Language, typeof vi> = { vi, en };

/** The text of `key` in `language`. */
export function t(language: Language, key: MessageKey): string {
  return catalogues[language].shell[key];
}
