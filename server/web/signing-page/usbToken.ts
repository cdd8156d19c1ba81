/**
 * The hook of the USB-token module (the desktop agent's client, tokenSigning.ts). The page calls
 * {@link startUsbToken} when the signer picks "USB token", once its session is open, with the
 * container `#usb-token` (its `data-part` children: status, problem, install, certificates,
 * legend, list, sign, retry, new-tab; `data-service-name`, `data-agent-download`) and what the
 * module needs to run the session's steps.
 */
import type { PageSession } from './api';
import { handedOverSession as handedOver, reportSignedToOpener } from './newTab';
import { setUpTokenSigning, type TokenPrepared, type TokenSignature } from './tokenSigning';

export type { TokenPrepared, TokenSignature };

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

export function startUsbToken<Result>(container: HTMLElement, hook: UsbTokenHook<Result>): void {
  container.hidden = false;
  setUpTokenSigning<Result>(container, {
    sessionId: hook.session.sessionId,
    documentTitle: hook.documentTitle,
    prepare: hook.prepare,
    signWithToken: hook.signWithToken,
    signed: hook.signed,
    describeServerRefusal: hook.describeServerRefusal,
    // A framed page hands its open session to the tab it opens.
    handOver: hook.session,
  });
}

/**
 * A tab opened by a framed page (USB-token signing does not work in a frame) gets the session
 * the frame held; undefined when none was handed over.
 */
export async function handedOverSession(): Promise<PageSession | undefined> {
  return (await handedOver()) as PageSession | undefined;
}

/** Called once the page's session is signed, whatever the method (a tab tells its opener). */
export function afterSigned(result: unknown): void {
  reportSignedToOpener(result);
}
