/**
 * The browser side of the desktop agent's protocol (agent/PROTOCOL.md, version 1): finds the
 * agent by probing its loopback ports, opens its WebSocket, says hello, lists the certificates
 * and asks for a signature. Everything the agent sends is read as untrusted data: each answer is
 * checked for the fields this page uses before it is handed on. No page logic here.
 */
// Types only from the protocol's module: its values bring zod (hundreds of KB) into the bundle.

import {
  AGENT_PORTS,
  agentProbeUrl,
  agentSocketUrl,
  SUPPORTED_AGENT_PROTOCOL_VERSIONS,
} from '@esign/shared/agentEndpoint';
import type {
  AgentDiscovery,
  AgentErrorCode,
  SignRequest,
  SignResult,
  TokenCertificate,
} from '@esign/shared/agentProtocol';

/** What the page itself finds wrong with the agent, beside the agent's own codes. */
export type AgentClientCode = 'AGENT_NOT_FOUND' | 'AGENT_CLOSED' | 'AGENT_ANSWER_INVALID';

/**
 * A refusal from the agent (its code, which may be one newer than this page knows; `pin` with
 * the PIN errors), or a failure to talk to it (AgentClientCode).
 */
export class AgentProblem extends Error {
  constructor(
    readonly code: AgentErrorCode | AgentClientCode | (string & {}),
    message: string,
    readonly pin?: { countLow: boolean; finalTry: boolean },
  ) {
    super(message);
    this.name = 'AgentProblem';
  }
}

/** How long one port may take to answer the probe: a closed port refuses at once. */
const PROBE_TIMEOUT_MS = 1000;
/** WebSocket close code of a refused origin (PROTOCOL.md, "Finding the agent"). */
const CLOSE_ORIGIN_REFUSED = 4003;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isText = (value: unknown): value is string => typeof value === 'string';

function invalid(what: string): AgentProblem {
  return new AgentProblem('AGENT_ANSWER_INVALID', `the agent sent ${what}`);
}

/** The discovery answer of one port, or null when nothing (or not the agent) answers there. */
async function probe(port: number): Promise<AgentDiscovery | null> {
  try {
    const response = await fetch(agentProbeUrl(port), {
      cache: 'no-store',
      credentials: 'omit',
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    if (!response.ok) return null;
    const answer: unknown = await response.json();
    if (
      !isObject(answer) ||
      !isText(answer.name) ||
      !isText(answer.version) ||
      !Array.isArray(answer.protocolVersions) ||
      answer.port !== port
    ) {
      return null;
    }
    return {
      name: answer.name,
      version: answer.version,
      protocolVersions: answer.protocolVersions.filter(
        (entry): entry is number => typeof entry === 'number',
      ),
      port,
    };
  } catch {
    return null;
  }
}

/**
 * The first of the agent's ports (in the protocol's order) where an agent answers. Throws
 * AGENT_NOT_FOUND when none does, UNSUPPORTED_VERSION when the agent speaks no version of ours.
 */
export async function discoverAgent(): Promise<AgentDiscovery> {
  for (const port of AGENT_PORTS) {
    const found = await probe(port);
    if (!found) continue;
    if (!found.protocolVersions.some((v) => SUPPORTED_AGENT_PROTOCOL_VERSIONS.includes(v))) {
      throw new AgentProblem(
        'UNSUPPORTED_VERSION',
        `${found.name} ${found.version} speaks protocol ${found.protocolVersions.join(', ')}`,
      );
    }
    return found;
  }
  throw new AgentProblem('AGENT_NOT_FOUND', `no agent answers on ports ${AGENT_PORTS.join(', ')}`);
}

function problemOf(error: Json): AgentProblem {
  const code = isText(error.code) ? error.code : 'INTERNAL';
  const pin = isObject(error.pin)
    ? { countLow: error.pin.countLow === true, finalTry: error.pin.finalTry === true }
    : undefined;
  return new AgentProblem(code, isText(error.message) ? error.message : code, pin);
}

function certificateOf(entry: unknown): TokenCertificate | null {
  if (!isObject(entry)) return null;
  const { certificateId, certificate, subject, issuer, serialNumber, notBefore, notAfter } = entry;
  const { tokenLabel, keyId } = entry;
  const texts = [certificateId, certificate, subject, issuer, serialNumber, notBefore, notAfter];
  if (!texts.every(isText) || !isText(tokenLabel) || !isText(keyId)) return null;
  return {
    certificateId: certificateId as string,
    certificate: certificate as string,
    subject: subject as string,
    issuer: issuer as string,
    serialNumber: serialNumber as string,
    notBefore: notBefore as string,
    notAfter: notAfter as string,
    tokenLabel,
    keyId,
  };
}

type SignFields = Omit<SignRequest, 'id' | 'type'>;

interface Pending {
  settle(message: Json): void;
  fail(problem: AgentProblem): void;
}

/** One WebSocket to the agent; requests are answered in any order, matched by id. */
export class AgentConnection {
  private readonly pending = new Map<string, Pending>();
  private ended: AgentProblem | null = null;
  private readonly tokenListeners = new Set<() => void>();
  private readonly endListeners = new Set<(problem: AgentProblem) => void>();
  private nextId = 1;

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (event) => this.receive(event.data));
    socket.addEventListener('close', (event) =>
      this.end(
        event.code === CLOSE_ORIGIN_REFUSED
          ? new AgentProblem('ORIGIN_NOT_ALLOWED', 'the agent refused this origin')
          : new AgentProblem('AGENT_CLOSED', `the agent closed the connection (${event.code})`),
      ),
    );
  }

  /** Opens the socket on the port discovery found; AGENT_CLOSED when it cannot. */
  static open(port: number): Promise<AgentConnection> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(agentSocketUrl(port));
      const failed = () => reject(new AgentProblem('AGENT_CLOSED', `no WebSocket on port ${port}`));
      socket.addEventListener('error', failed, { once: true });
      socket.addEventListener(
        'open',
        () => {
          socket.removeEventListener('error', failed);
          resolve(new AgentConnection(socket));
        },
        { once: true },
      );
    });
  }

  /** Agrees on the protocol version (UNSUPPORTED_VERSION when there is none in common). */
  async hello(): Promise<number> {
    const answer = await this.ask('hello.ok', {
      type: 'hello',
      versions: [...SUPPORTED_AGENT_PROTOCOL_VERSIONS],
    });
    if (typeof answer.version !== 'number') throw invalid('a hello.ok without a version');
    return answer.version;
  }

  /** The signing certificates on the tokens plugged in now (entries it cannot read are left out). */
  async certificates(): Promise<TokenCertificate[]> {
    const answer = await this.ask('certificates.list.result', { type: 'certificates.list' });
    if (!Array.isArray(answer.certificates)) throw invalid('a list without certificates');
    return answer.certificates
      .map(certificateOf)
      .filter((entry): entry is TokenCertificate => entry !== null);
  }

  /** Asks the user (consent, PIN) and the token for the signature; waits as long as they take. */
  async sign(fields: SignFields): Promise<Omit<SignResult, 'id' | 'type'>> {
    const answer = await this.ask('sign.result', { type: 'sign', ...fields });
    const { signedHash, certificateChain, timestampToken } = answer;
    if (
      !isText(signedHash) ||
      !isText(timestampToken) ||
      !Array.isArray(certificateChain) ||
      certificateChain.length === 0 ||
      !certificateChain.every(isText)
    ) {
      throw invalid('a sign.result without signature, chain or timestamp');
    }
    return { signedHash, certificateChain, timestampToken };
  }

  /** Called when a token is plugged in or removed. */
  onTokensChanged(listener: () => void): void {
    this.tokenListeners.add(listener);
  }

  /** Called once when the connection ends without the page closing it. */
  onEnd(listener: (problem: AgentProblem) => void): void {
    this.endListeners.add(listener);
  }

  close(): void {
    this.endListeners.clear();
    this.tokenListeners.clear();
    this.end(new AgentProblem('AGENT_CLOSED', 'closed by the page'));
    this.socket.close(1000);
  }

  private ask(expected: string, request: Json): Promise<Json> {
    if (this.ended) return Promise.reject(this.ended);
    const id = `page-${this.nextId++}`;
    return new Promise((resolve, reject) => {
      this.pending.set(id, {
        settle: (message) => {
          if (message.type === expected) resolve(message);
          else if (message.type === 'error') reject(problemOf(message));
          else reject(invalid(`${String(message.type)} in answer to ${String(request.type)}`));
        },
        fail: reject,
      });
      this.socket.send(JSON.stringify({ id, ...request }));
    });
  }

  private receive(data: unknown): void {
    let message: unknown;
    try {
      message = isText(data) ? JSON.parse(data) : null;
    } catch {
      message = null;
    }
    if (!isObject(message)) return;
    if (message.type === 'tokens.changed') {
      for (const listener of this.tokenListeners) listener();
      return;
    }
    const answered = isText(message.id) ? this.pending.get(message.id) : undefined;
    if (answered && isText(message.id)) {
      this.pending.delete(message.id);
      answered.settle(message);
      return;
    }
    if (message.id === null && message.type === 'error') {
      // A refusal of the connection (origin) ends it; any other answers the oldest request
      // (a dropped one: RATE_LIMITED).
      const problem = problemOf(message);
      if (problem.code === 'ORIGIN_NOT_ALLOWED') {
        this.end(problem);
        return;
      }
      const [oldest] = this.pending.entries();
      if (oldest) {
        this.pending.delete(oldest[0]);
        oldest[1].fail(problem);
      }
    }
  }

  private end(problem: AgentProblem): void {
    if (this.ended) return;
    this.ended = problem;
    for (const request of this.pending.values()) request.fail(problem);
    this.pending.clear();
    for (const listener of this.endListeners) listener(problem);
  }
}
