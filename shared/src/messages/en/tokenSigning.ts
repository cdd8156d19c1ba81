import type { tokenSigning as vi } from '../vi/tokenSigning';

export const tokenSigning: typeof vi = {
  steps: {
    FRAMED:
      "Signing with a USB token does not work inside another website's frame. Open the signing page in a new tab to continue.",
    OPEN_NEW_TAB: 'Continue in a new tab',
    NEW_TAB_OPENED: 'The signing page is open in a new tab; finish signing there.',
    SEARCHING: 'Looking for the signing agent on your computer…',
    CONNECTING: (origin: string) => `Connecting to the signing agent. If it asks, allow ${origin}.`,
    LISTING: 'Reading the certificates on your USB token…',
    CHOOSE_ONE: 'The certificate you will sign with',
    CHOOSE_MANY: 'Choose the certificate to sign with',
    CERTIFICATE_ISSUER: (issuer: string) => `Issued by: ${issuer}`,
    CERTIFICATE_VALIDITY: (from: string, to: string) => `Valid: from ${from} to ${to}`,
    CERTIFICATE_TOKEN: (token: string) => `On token: ${token}`,
    SIGN: 'Sign with the USB token',
    PREPARING: 'Preparing the document for signing…',
    WAITING_FOR_SIGNER: "Confirm and enter your PIN in the signing agent's window.",
    SUBMITTING: 'Sending the signature…',
    RETRY: 'Try again',
    INSTALL: 'Download and install the signing agent',
  },
  agentRefusals: {
    PIN_INCORRECT: 'The PIN is incorrect. Sign again and enter the right PIN.',
    PIN_LOCKED:
      "The token's PIN is locked after too many wrong tries. Contact your certificate provider to unlock it.",
    PIN_TRIES_LOW:
      'The unattended signing agent stopped: its USB token reports few PIN tries left after a wrong PIN. Ask the administrator of the signing machine to check the PIN.',
    NO_TOKEN:
      "No USB token with a signing certificate was found. Plug in your token (and install its provider's driver), then press Try again.",
    TOKEN_REMOVED: 'The token was removed while signing. Plug it in again and retry.',
    CERTIFICATE_NOT_FOUND:
      'The chosen certificate is no longer on a token plugged in. Plug the token in again and retry.',
    USER_CANCELLED: 'You cancelled the signing request in the signing agent.',
    ORIGIN_NOT_ALLOWED: (origin: string) =>
      `The signing agent does not allow ${origin}. Open the agent, allow this website (Settings, allowed websites), then press Try again.`,
    UNSUPPORTED_VERSION:
      'The signing agent on this computer does not match this page. Download and install the new version.',
    BAD_REQUEST:
      "The signing agent did not understand the page's request. Reload the page and retry.",
    TIMESTAMP_FAILED: 'The signing agent could not get a timestamp. Check your network and retry.',
    MECHANISM_UNSUPPORTED:
      'The token does not support the signature algorithm this certificate needs.',
    TICKET_INVALID:
      'The signing agent refused this signing request (expired, or this signing service is not set up in the agent). Sign again; if it persists, contact support.',
    RATE_LIMITED: 'Too many requests to the signing agent. Wait a moment and retry.',
    BUSY: 'The signing agent is waiting for you on another signing request. Finish or cancel it, then retry.',
    TOKEN_ERROR: 'The token reported an error. Unplug it, plug it in again and retry.',
    INTERNAL: 'The signing agent ran into an unexpected error. Please retry.',
  },
  pageRefusals: {
    AGENT_NOT_FOUND:
      'The signing agent is not running on this computer. If it is not installed, download and install it; start it, then press Try again.',
    AGENT_CLOSED:
      'The connection to the signing agent was lost. Check that it is still running, then retry.',
    AGENT_ANSWER_INVALID:
      "This page cannot read the signing agent's answer. Please update the agent.",
    PIN_INCORRECT_COUNT_LOW:
      'The PIN is incorrect. Few tries are left: more wrong PINs may lock the token.',
    PIN_INCORRECT_FINAL_TRY:
      'The PIN is incorrect. One try is left: one more wrong PIN locks the token.',
  },
  serverRefusals: {
    PREPARATION_STALE:
      'More than 5 minutes passed since the document was prepared. Press Sign with the USB token to prepare it again and sign.',
    SIGNER_IDENTITY_MISMATCH:
      "The chosen certificate names someone other than this contract's signer. Choose your own certificate.",
    CERTIFICATE_UNTRUSTED: 'This certificate was not issued by a trusted certification authority.',
    CERTIFICATE_EXPIRED: 'This certificate has expired.',
    CERTIFICATE_REVOKED: 'This certificate has been revoked.',
    DOCUMENT_CHANGED: 'Someone else has just signed. Reload the page to sign the newest version.',
    SIGNING_REFUSED: 'The service did not accept the signature.',
  },
};
