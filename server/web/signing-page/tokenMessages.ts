/**
 * The words of USB-token signing on the signing page, in the page's language: the steps, and
 * what each refusal means for the signer (the agent's error codes, the page's own, and the
 * server's answers to prepare and sign-with-token). The texts live in the shared catalogue
 * (shared/src/messages/<language>/tokenSigning.ts); this module picks the language and the
 * refusal.
 */
import type { AgentErrorCode } from '@esign/shared/agentProtocol';
import { tokenSigning as en } from '@esign/shared/messages/en/tokenSigning';
import { tokenSigning as vi } from '@esign/shared/messages/vi/tokenSigning';

export type TokenWords = typeof vi;

type Refusals = TokenWords['agentRefusals'] &
  TokenWords['pageRefusals'] &
  TokenWords['serverRefusals'];

/** A code the page has words for. */
export type RefusalCode = keyof Refusals;

/**
 * Every agent error code has its words here: a code added to the protocol fails to compile.
 * (Types only: the protocol module's values would bring zod into the page.)
 */
const agentRefusals: Record<AgentErrorCode, unknown> = vi.agentRefusals;

/** The page's words: its language is the body's `data-locale`. */
export function tokenWords(): TokenWords {
  return document.body.dataset.locale === 'en' ? en : vi;
}

function refusalsOf(words: TokenWords): Refusals {
  return { ...words.agentRefusals, ...words.pageRefusals, ...words.serverRefusals };
}

/** Whether a code from outside (an agent or the server) has words here. */
export function hasRefusal(code: string): code is RefusalCode {
  return Object.hasOwn(refusalsOf(vi), code);
}

/** The agent's codes this page knows; an unknown one is treated as INTERNAL (PROTOCOL.md). */
export function isAgentErrorCode(code: string): code is AgentErrorCode {
  return Object.hasOwn(agentRefusals, code);
}

/** A refusal in words; ORIGIN_NOT_ALLOWED names the page's origin. */
export function refusalText(words: TokenWords, code: RefusalCode, origin: string): string {
  const text = refusalsOf(words)[code];
  return typeof text === 'function' ? text(origin) : text;
}
