/**
 * C_Login for one signature: the PIN asked of the user (not for PIN-pad tokens), and the
 * token's refusals as the protocol's PIN codes with the tries flags it reports after them.
 */
import type { Session, Slot } from 'graphene-pk11';
import { AgentFailure, type PinTries } from '../errors';
import type { PinQuestion, UserPrompts } from '../prompts';
import { ckr, pkcs11Code, tokenFlag } from './returnValues';
import type { PresentToken } from './tokenRegistry';

export function pinTries(flags: number): PinTries {
  return {
    countLow: (flags & tokenFlag.USER_PIN_COUNT_LOW) !== 0,
    finalTry: (flags & tokenFlag.USER_PIN_FINAL_TRY) !== 0,
  };
}

/** Refuses at once a token whose user PIN is already locked (before consent or PIN). */
export function assertPinUsable(token: PresentToken): void {
  if ((token.flags & tokenFlag.USER_PIN_LOCKED) !== 0) {
    throw new AgentFailure('PIN_LOCKED', `the user PIN of "${token.label}" is locked`);
  }
}

/** The PIN from the user, or undefined for a PIN pad (the token asks itself). */
async function pinFor(
  flags: number,
  askPin: UserPrompts['askPin'],
  question: Omit<PinQuestion, 'countLow' | 'finalTry'>,
): Promise<string | undefined> {
  if ((flags & tokenFlag.PROTECTED_AUTHENTICATION_PATH) !== 0) return undefined;
  const answer = await askPin({ ...question, ...pinTries(flags) });
  if (answer === null) throw new AgentFailure('USER_CANCELLED', 'the user closed the PIN window');
  return answer;
}

/** A refused C_Login as a protocol failure; undefined for codes that are not about the PIN. */
function loginRefusal(
  code: number | undefined,
  slot: Slot,
  flagsBefore: number,
  label: string,
): AgentFailure | undefined {
  if (code === ckr.PIN_INCORRECT || code === ckr.PIN_INVALID || code === ckr.PIN_LEN_RANGE) {
    let after = flagsBefore;
    try {
      after = slot.getToken().flags;
    } catch {
      // Tries left stay unknown.
    }
    if ((after & tokenFlag.USER_PIN_LOCKED) !== 0) {
      return new AgentFailure(
        'PIN_LOCKED',
        `the user PIN of "${label}" is now locked`,
        pinTries(after),
      );
    }
    return new AgentFailure('PIN_INCORRECT', `wrong PIN for "${label}"`, pinTries(after));
  }
  if (code === ckr.PIN_LOCKED) {
    return new AgentFailure('PIN_LOCKED', `the user PIN of "${label}" is locked`);
  }
  if (code === ckr.FUNCTION_CANCELED) {
    return new AgentFailure('USER_CANCELLED', 'the PIN entry was cancelled on the token');
  }
  return undefined;
}

/** Logs the user in to `session`, asking the PIN with `question`'s context. */
export async function logIn(
  session: Session,
  slot: Slot,
  askPin: UserPrompts['askPin'],
  question: Omit<PinQuestion, 'countLow' | 'finalTry'>,
): Promise<void> {
  const flags = slot.getToken().flags;
  const pin = await pinFor(flags, askPin, question);
  try {
    // With a PIN pad the token asks the user itself: C_Login without a PIN.
    session.lib.C_Login(session.handle, 1, pin);
  } catch (error) {
    const code = pkcs11Code(error);
    if (code === ckr.USER_ALREADY_LOGGED_IN) return;
    throw loginRefusal(code, slot, flags, question.token.label) ?? error;
  }
}
