/**
 * The hook of the USB-token module (the desktop agent's client). The page calls
 * {@link startUsbToken} when the signer picks "USB token", once its session is open, with the
 * container `#usb-token` (its `data-part` children: status, problem, install, certificates,
 * legend, list, sign, retry, new-tab; `data-service-name`) and what the module needs to run the
 * session's steps. The module plugs in here; until it does, the container shows its intro.
 */
import type { PageSession } from './api';

/** The server's answer to POST /api/signing/{sessionId}/prepare. */
export interface TokenPrepared {
  contractHash: string;
  tsaUrl: string;
  ticket: string;
}

/** What POST /api/signing/{sessionId}/sign-with-token takes. */
export interface TokenSignature {
  signedHash: string;
  certificateChain: string[];
  timestampToken: string;
}

export interface UsbTokenHook<Result> {
  session: PageSession;
  /** Shown by the agent when it asks for consent. */
  documentTitle: string;
  /** The session's steps with its page credential; a refusal throws the page's Refusal. */
  prepare(certificate: string): Promise<TokenPrepared>;
  signWithToken(signature: TokenSignature): Promise<Result>;
  /** The server took the signature: the page shows the result. */
  signed(result: Result): void;
  /** The page's words for a server refusal. */
  describeServerRefusal(error: unknown): string;
}

export function startUsbToken<Result>(container: HTMLElement, _hook: UsbTokenHook<Result>): void {
  container.hidden = false;
}

/**
 * A tab opened by a framed page (USB-token signing does not work in a frame) gets the session
 * the frame held here; undefined when none was handed over.
 */
export async function handedOverSession(): Promise<PageSession | undefined> {
  return undefined;
}

/** Called once the page's session is signed, whatever the method (a tab tells its opener). */
export function afterSigned(_result: unknown): void {}
