/**
 * USB-token signing on the signing page, through the desktop agent: find the agent (or link its
 * installer), list the token's certificates and let the signer pick one, then for each attempt
 * prepare the revision on the server with that certificate (so it is dated now and names the
 * certificate), have the agent sign its digest with the server's ticket, and post the answer to
 * sign-with-token. In a frame it only offers a new tab. The page gives the server calls and what
 * to do once signed; every text comes from the shared catalogue (tokenMessages).
 */
import type { TokenCertificate } from '@esign/shared/agentProtocol';
import { AgentConnection, AgentProblem, discoverAgent } from './agentClient';
import { continueInNewTab } from './newTab';
import {
  hasRefusal,
  isAgentErrorCode,
  type RefusalCode,
  refusalText,
  tokenWords,
} from './tokenMessages';

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

export interface TokenSigningOptions<Result> {
  sessionId: string;
  /** Shown by the agent when it asks for consent. */
  documentTitle: string;
  /** Calls the server with the session's credential; a refusal throws `{ code, message }`. */
  prepare(certificate: string): Promise<TokenPrepared>;
  signWithToken(signature: TokenSignature): Promise<Result>;
  /** The server took the signature (here, or in the tab this frame opened). */
  signed(result: Result): void;
  /** The page's words for a server refusal this module has none for. */
  describeServerRefusal(error: unknown): string;
  /** Given to the new tab when the page is framed: the session it continues. */
  handOver: unknown;
}

function part<T extends HTMLElement>(root: HTMLElement, role: string): T {
  const found = root.querySelector<T>(`[data-part="${role}"]`);
  if (!found) throw new Error(`the USB token section has no ${role}`);
  return found;
}

/** The value of one attribute (CN, O, …) of an RFC 4514 name, or the whole name. */
function nameAttribute(name: string, attribute: string): string {
  const match = new RegExp(`(?:^|,)\\s*${attribute}=((?:\\\\.|[^,\\\\])*)`).exec(name);
  return match?.[1]?.replace(/\\(.)/g, '$1') ?? name;
}

function day(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleDateString('vi-VN');
}

/** `sha256:<hex>` as the agent's base64 document digest. */
function digestOf(contractHash: string): string {
  const pairs = contractHash.replace(/^sha256:/, '').match(/../g) ?? [];
  return btoa(String.fromCharCode(...pairs.map((hex) => Number.parseInt(hex, 16))));
}

function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

/** The words for an agent's refusal: its code's, the PIN's flags first; unknown codes as INTERNAL. */
function agentWords(problem: AgentProblem): RefusalCode {
  if (problem.code === 'PIN_INCORRECT' && problem.pin?.finalTry) return 'PIN_INCORRECT_FINAL_TRY';
  if (problem.code === 'PIN_INCORRECT' && problem.pin?.countLow) return 'PIN_INCORRECT_COUNT_LOW';
  if (isAgentErrorCode(problem.code) || hasRefusal(problem.code)) return problem.code;
  return 'INTERNAL';
}

/** Sets up the #usb section for the session; runs at once (or offers a new tab in a frame). */
export function setUpTokenSigning<Result>(
  root: HTMLElement,
  options: TokenSigningOptions<Result>,
): void {
  const status = part(root, 'status');
  const problem = part(root, 'problem');
  const install = part(root, 'install');
  const chooser = part<HTMLFieldSetElement>(root, 'certificates');
  const legend = part(root, 'legend');
  const list = part(root, 'list');
  const signButton = part<HTMLButtonElement>(root, 'sign');
  const retryButton = part<HTMLButtonElement>(root, 'retry');
  const newTabButton = part<HTMLButtonElement>(root, 'new-tab');
  const origin = window.location.origin;
  const words = tokenWords();
  // The server writes the service's name and the agent's installer link on the section.
  const serviceName = root.dataset.serviceName || 'ESign';
  const installLink = document.createElement('a');
  installLink.href = root.dataset.agentDownload || '/agent';
  installLink.target = '_blank';
  installLink.rel = 'noopener';
  installLink.textContent = words.steps.INSTALL;
  install.replaceChildren(installLink);
  signButton.textContent = words.steps.SIGN;
  retryButton.textContent = words.steps.RETRY;
  newTabButton.textContent = words.steps.OPEN_NEW_TAB;

  let connection: AgentConnection | null = null;
  let certificates: TokenCertificate[] = [];
  let working = false;

  const state = (name: string) => {
    root.dataset.state = name;
  };
  const say = (text: string) => {
    status.textContent = text;
    status.hidden = false;
  };
  const clearProblem = () => {
    problem.hidden = true;
    problem.dataset.code = '';
    install.hidden = true;
    retryButton.hidden = true;
  };
  /** A refusal in plain words, with what the signer can do next. */
  const fail = (error: unknown) => {
    let code = codeOf(error) ?? 'INTERNAL';
    if (error instanceof AgentProblem) {
      problem.textContent = refusalText(words, agentWords(error), origin);
      code = error.code;
      if (error.code === 'ORIGIN_NOT_ALLOWED' || error.code === 'AGENT_CLOSED') drop();
    } else if (hasRefusal(code)) {
      problem.textContent = refusalText(words, code, origin);
    } else {
      problem.textContent = `${words.serverRefusals.SIGNING_REFUSED} ${options.describeServerRefusal(error)}`;
    }
    problem.dataset.code = code;
    problem.hidden = false;
    status.hidden = true;
    install.hidden = !(code === 'AGENT_NOT_FOUND' || code === 'UNSUPPORTED_VERSION');
    // Without an agent or a certificate there is nothing to sign with: look again on retry.
    const lookAgain = connection === null || certificates.length === 0;
    retryButton.hidden = !lookAgain;
    signButton.hidden = lookAgain;
    signButton.disabled = false;
    state('failed');
  };
  const drop = () => {
    connection?.close();
    connection = null;
    certificates = [];
    chooser.hidden = true;
  };

  const showCertificates = () => {
    const chosen = list.querySelector<HTMLInputElement>('input:checked')?.value;
    legend.replaceChildren();
    legend.textContent = certificates.length > 1 ? words.steps.CHOOSE_MANY : words.steps.CHOOSE_ONE;
    const rows = certificates.map((certificate) => {
      const label = document.createElement('label');
      label.className = 'certificate';
      const radio = document.createElement('input');
      radio.type = 'radio';
      radio.name = 'usb-certificate';
      radio.value = certificate.certificateId;
      radio.checked = certificate.certificateId === chosen;
      const holder = document.createElement('strong');
      holder.textContent = nameAttribute(certificate.subject, 'CN');
      const lines = [
        certificate.subject,
        words.steps.CERTIFICATE_ISSUER(nameAttribute(certificate.issuer, 'CN')),
        words.steps.CERTIFICATE_VALIDITY(day(certificate.notBefore), day(certificate.notAfter)),
        words.steps.CERTIFICATE_TOKEN(certificate.tokenLabel),
      ].map((line) => {
        const text = document.createElement('span');
        text.className = 'detail';
        text.textContent = line;
        return text;
      });
      label.replaceChildren(radio, holder, ...lines);
      return label;
    });
    // The first is chosen unless the signer's choice is still there.
    if (rows.length > 0 && !rows.some((row) => row.querySelector('input')?.checked)) {
      rows[0]!.querySelector('input')!.checked = true;
    }
    list.replaceChildren(...rows);
    chooser.hidden = rows.length === 0;
  };

  const listCertificates = async (open: AgentConnection) => {
    say(words.steps.LISTING);
    certificates = await open.certificates();
    showCertificates();
    if (certificates.length === 0) {
      throw new AgentProblem('NO_TOKEN', 'no signing certificate on the tokens plugged in');
    }
    status.hidden = true;
    signButton.hidden = false;
    state('choosing');
  };

  /** Finds the agent and lists what can sign; on a failure says why and offers to retry. */
  const connect = async () => {
    clearProblem();
    signButton.hidden = true;
    drop();
    state('searching');
    say(words.steps.SEARCHING);
    try {
      const found = await discoverAgent();
      say(words.steps.CONNECTING(origin));
      const open = await AgentConnection.open(found.port);
      connection = open;
      open.onEnd((ended) => {
        if (connection !== open) return;
        connection = null;
        if (!working) fail(ended);
      });
      open.onTokensChanged(() => {
        if (working || connection !== open) return;
        clearProblem();
        listCertificates(open).catch(fail);
      });
      await open.hello();
      await listCertificates(open);
    } catch (error) {
      fail(error);
    }
  };

  /** One attempt: prepare now with the chosen certificate, sign on the token, submit. */
  const sign = async () => {
    const open = connection;
    const chosenId = list.querySelector<HTMLInputElement>('input:checked')?.value;
    const certificate = certificates.find((entry) => entry.certificateId === chosenId);
    if (!open || !certificate || working) return;
    working = true;
    clearProblem();
    signButton.disabled = true;
    for (const radio of list.querySelectorAll('input')) radio.disabled = true;
    state('signing');
    try {
      say(words.steps.PREPARING);
      const prepared = await options.prepare(certificate.certificate);
      say(words.steps.WAITING_FOR_SIGNER);
      const signature = await open.sign({
        documentDigest: digestOf(prepared.contractHash),
        certificateId: certificate.certificateId,
        documentTitle: options.documentTitle.slice(0, 1000) || serviceName,
        requester: { origin, serviceName, sessionId: options.sessionId },
        tsaUrl: prepared.tsaUrl,
        ticket: prepared.ticket,
      });
      say(words.steps.SUBMITTING);
      const result = await options.signWithToken(signature);
      drop();
      state('signed');
      options.signed(result);
    } catch (error) {
      fail(error);
    } finally {
      working = false;
      for (const radio of list.querySelectorAll('input')) radio.disabled = false;
    }
  };

  signButton.addEventListener('click', () => void sign());
  retryButton.addEventListener('click', () => void connect());
  root.hidden = false;

  if (window.top !== window.self) {
    // The agent's consent window names the page's origin; a frame would hide whose page asks.
    state('framed');
    say(words.steps.FRAMED);
    newTabButton.hidden = false;
    newTabButton.addEventListener('click', () => {
      if (continueInNewTab(options.handOver, (result) => options.signed(result as Result))) {
        say(words.steps.NEW_TAB_OPENED);
      }
    });
    return;
  }
  void connect();
}
