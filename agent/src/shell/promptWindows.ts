import type { PinQuestion, SignConsent, UserPrompts } from '../core/prompts';
import type { PromptAnswer, WindowRequest } from './api';

/** Opens a window for a request and settles with its answer (closing it unanswered: null). */
export type OpenPromptWindow = (
  request: Exclude<WindowRequest, { kind: 'settings' }>,
) => Promise<PromptAnswer>;

/**
 * The user's three answers as windows: what the Electron shell gives the core. Anything but an
 * explicit yes is a no; anything but a non-empty string is a cancelled PIN.
 */
export function windowPrompts(
  open: OpenPromptWindow,
  language: () => WindowRequest['language'],
): UserPrompts {
  return {
    approveOrigin: async (origin: string) =>
      (await open({ kind: 'approveOrigin', language: language(), origin })) === true,
    confirmSign: async (consent: SignConsent) =>
      (await open({ kind: 'confirmSign', language: language(), consent })) === true,
    askPin: async (question: PinQuestion) => {
      const answer = await open({ kind: 'askPin', language: language(), question });
      return typeof answer === 'string' && answer !== '' ? answer : null;
    },
  };
}
