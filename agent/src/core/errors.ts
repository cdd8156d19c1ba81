import { AGENT_ERROR_MESSAGES, type AgentError, type AgentErrorCode } from '@esign/shared';

/** What the token said of the PIN tries left (PKCS#11 reports flags, not a number). */
export interface PinTries {
  countLow: boolean;
  finalTry: boolean;
}

/**
 * The agent's one error type: a code of the protocol's closed set, a message for logs (never
 * a PIN), and what the page needs beside it. Everything the core throws on purpose is one.
 */
export class AgentFailure extends Error {
  constructor(
    readonly code: AgentErrorCode,
    message: string,
    readonly pin?: PinTries,
  ) {
    super(message);
    this.name = 'AgentFailure';
  }
}

/** The error frame for a failure (anything not an AgentFailure is INTERNAL). */
export function errorFrame(id: string | null, error: unknown): AgentError {
  const failure =
    error instanceof AgentFailure
      ? error
      : new AgentFailure('INTERNAL', error instanceof Error ? error.message : String(error));
  return {
    id,
    type: 'error',
    code: failure.code,
    message: failure.message.slice(0, 2000),
    userMessage: AGENT_ERROR_MESSAGES[failure.code],
    ...(failure.pin ? { pin: failure.pin } : {}),
  };
}

/**
 * What keeps the agent from starting, said so that the user can fix it: a settings or policy
 * file that is not valid, a PIN file others can read, every port of the list taken. It never
 * reaches a page (no agent is listening yet).
 */
export class ConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigurationError';
  }
}
