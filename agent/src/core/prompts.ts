import type { SignRequest } from '@esign/shared';

/** What the user is shown before a signature: everything needed to say yes or no. */
export interface SignConsent {
  /** The page's origin from the WebSocket handshake (not the page's own claim). */
  origin: string;
  serviceName: string;
  documentTitle: string;
  /** SHA-256 of the document's signed byte range, hex. */
  documentDigestHex: string;
  certificate: { subject: string; issuer: string; serialNumber: string; notAfter: string };
  token: { label: string; serialNumber: string; module: string };
}

/** What the PIN window shows; the PIN goes from it to C_Login and nowhere else. */
export interface PinQuestion {
  origin: string;
  token: { label: string; serialNumber: string; module: string };
  certificateSubject: string;
  /** The token reports few tries left (CKF_USER_PIN_COUNT_LOW). */
  countLow: boolean;
  /** The next wrong PIN locks the token (CKF_USER_PIN_FINAL_TRY). */
  finalTry: boolean;
}

/**
 * The three questions only the user answers. The Electron shell shows windows; tests and the
 * headless mode answer from a policy. Each answer may take as long as the user needs.
 */
export interface UserPrompts {
  /** May this origin use the agent? A yes is remembered (and revocable) by the caller. */
  approveOrigin(origin: string): Promise<boolean>;
  /** Consent to one signature. */
  confirmSign(consent: SignConsent): Promise<boolean>;
  /**
   * The user PIN, or null when the user cancels. Not called for PIN-pad tokens. May throw an
   * AgentFailure when no PIN is given for another reason (headless: PIN_TRIES_LOW).
   */
  askPin(question: PinQuestion): Promise<string | null>;
}

/** A ticket that passed the check, held for the signature it allows. */
export interface AcceptedTicket {
  /** The TSA the server named: used when the request names none. */
  tsaUrl: string;
  sessionId: string;
  /** Gives the ticket back when no signature came of it (cancel, wrong PIN), so it may retry. */
  release(): void;
}

/**
 * A check of the server's signing ticket, run before the token is touched. Throws
 * AgentFailure TICKET_INVALID to refuse; null when the request has no ticket and none is
 * required, so the user's consent alone decides.
 */
export interface SignTicketCheck {
  check(request: SignRequest, origin: string): Promise<AcceptedTicket | null>;
}
