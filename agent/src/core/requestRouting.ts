/**
 * What the agent answers to each frame a page sends: the frame read and checked, the origin's
 * admission awaited, then one handler per request type (`hello` first, then
 * `certificates.list` and `sign`). Every refusal is an error frame with the protocol's code.
 */
import {
  type AgentInfo,
  type AgentRequest,
  type CertificatesListRequest,
  type HelloRequest,
  isAgentRequest,
  negotiateAgentProtocolVersion,
  parseAgentMessage,
  type SignRequest,
  type SignResult,
  SUPPORTED_AGENT_PROTOCOL_VERSIONS,
  type TokenCertificate,
  type TokenSummary,
} from '@esign/shared';
import { AgentFailure, errorFrame } from './errors';
import type { PageConnection } from './pageConnection';

/** What the socket asks of the core. */
export interface AgentRequestHandlers {
  listCertificates(origin: string): Promise<TokenCertificate[]>;
  sign(request: SignRequest, origin: string): Promise<Omit<SignResult, 'id' | 'type'>>;
  tokens(): TokenSummary[];
  onTokensChanged(listener: () => void): () => void;
}

export interface RequestContext {
  agent: AgentInfo;
  handlers: AgentRequestHandlers;
  log?(message: string): void;
}

/** The request in a text frame, or null once the page was told why there is none. */
function readRequest(connection: PageConnection, text: string): AgentRequest | null {
  const parsed = parseAgentMessage(text);
  if (!parsed.ok) {
    connection.fail(parsed.id, 'BAD_REQUEST', parsed.reason);
    return null;
  }
  if (!isAgentRequest(parsed.message)) {
    connection.fail(parsed.message.id, 'BAD_REQUEST', `${parsed.message.type} is not a request`);
    return null;
  }
  return parsed.message;
}

function hello(connection: PageConnection, message: HelloRequest, context: RequestContext): void {
  const version = negotiateAgentProtocolVersion(message.versions);
  if (version === null) {
    connection.send({
      ...errorFrame(
        message.id,
        new AgentFailure('UNSUPPORTED_VERSION', 'no protocol version in common'),
      ),
      supportedVersions: [...SUPPORTED_AGENT_PROTOCOL_VERSIONS],
    });
    return;
  }
  connection.version = version;
  connection.send({ id: message.id, type: 'hello.ok', version, agent: context.agent });
}

async function listCertificates(
  connection: PageConnection,
  message: CertificatesListRequest,
  context: RequestContext,
): Promise<void> {
  const certificates = await context.handlers.listCertificates(connection.origin);
  connection.send({ id: message.id, type: 'certificates.list.result', certificates });
}

async function sign(
  connection: PageConnection,
  message: SignRequest,
  context: RequestContext,
): Promise<void> {
  if (message.requester.origin !== connection.origin) {
    throw new AgentFailure(
      'BAD_REQUEST',
      `requester.origin ${message.requester.origin} is not this page's origin`,
    );
  }
  const result = await connection.oneSignAtATime(() =>
    context.handlers.sign(message, connection.origin),
  );
  connection.send({ id: message.id, type: 'sign.result', ...result });
}

/** Runs the request's handler; `hello` must have come first. */
async function route(
  connection: PageConnection,
  message: AgentRequest,
  context: RequestContext,
): Promise<void> {
  if (message.type === 'hello') return hello(connection, message, context);
  if (connection.version === null) throw new AgentFailure('BAD_REQUEST', 'hello must come first');
  if (message.type === 'certificates.list') return listCertificates(connection, message, context);
  return sign(connection, message, context);
}

/** Answers one text frame: nothing but an error frame unless the origin is admitted. */
export async function answerFrame(
  connection: PageConnection,
  text: string,
  context: RequestContext,
): Promise<void> {
  const message = readRequest(connection, text);
  if (!message) return;
  if (!(await connection.admitted)) {
    connection.fail(message.id, 'ORIGIN_NOT_ALLOWED', `${connection.origin} is not allowed`);
    return;
  }
  try {
    await route(connection, message, context);
  } catch (error) {
    if (!(error instanceof AgentFailure)) {
      context.log?.(`request ${message.type} failed: ${String(error)}`);
    }
    connection.send(errorFrame(message.id, error));
  }
}
