import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AGENT_HOST,
  type AgentDiscovery,
  type AgentInfo,
  type AgentOutgoing,
  isAgentRequest,
  negotiateAgentProtocolVersion,
  parseAgentMessage,
  type SignRequest,
  type SignResult,
  SUPPORTED_AGENT_PROTOCOL_VERSIONS,
  type TokenCertificate,
  type TokenSummary,
} from '@esign/shared';
import { type WebSocket, WebSocketServer } from 'ws';
import { AgentFailure, ConfigurationError, errorFrame } from './errors';
import { OriginApprovals } from './originApprovals';

/** What the socket asks of the core. */
export interface AgentRequestHandlers {
  listCertificates(origin: string): Promise<TokenCertificate[]>;
  sign(request: SignRequest, origin: string): Promise<Omit<SignResult, 'id' | 'type'>>;
  tokens(): TokenSummary[];
  onTokensChanged(listener: () => void): () => void;
}

export interface AgentServerLimits {
  /** Largest frame a page may send (requests are small; a certificate list goes the other way). */
  maxMessageBytes: number;
  /** Sustained requests per second per connection, and the burst allowed above it. */
  messagesPerSecond: number;
  burst: number;
}

export const DEFAULT_AGENT_SERVER_LIMITS: AgentServerLimits = {
  maxMessageBytes: 64 * 1024,
  messagesPerSecond: 10,
  burst: 30,
};

export interface AgentServerOptions {
  /** Tried in order; the first free one is used. */
  ports: readonly number[];
  agent: AgentInfo;
  approvals: OriginApprovals;
  handlers: AgentRequestHandlers;
  limits?: AgentServerLimits;
  log?(message: string): void;
}

export interface AgentServer {
  port: number;
  close(): Promise<void>;
}

/** WebSocket close code when the origin is refused (4000-4999: application codes). */
export const CLOSE_ORIGIN_REFUSED = 4003;

interface Connection {
  socket: WebSocket;
  origin: string;
  admitted: Promise<boolean>;
  version: number | null;
  signing: boolean;
  tokens: number;
  refilledAt: number;
}

/** Answers the discovery probe, CORS and Chrome's Private Network Access preflight included. */
function discoveryHandler(info: () => AgentDiscovery) {
  return (request: http.IncomingMessage, response: http.ServerResponse) => {
    const origin = OriginApprovals.canonical(request.headers.origin);
    const headers: Record<string, string> = {
      'Cache-Control': 'no-store',
      ...(origin ? { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' } : {}),
    };
    if (request.method === 'OPTIONS') {
      response.writeHead(204, {
        ...headers,
        'Access-Control-Allow-Methods': 'GET',
        'Access-Control-Allow-Private-Network': 'true',
        'Access-Control-Max-Age': '600',
      });
      response.end();
      return;
    }
    if (request.method !== 'GET' || (request.url ?? '/').split('?')[0] !== '/') {
      response.writeHead(404, headers);
      response.end();
      return;
    }
    response.writeHead(200, { ...headers, 'Content-Type': 'application/json' });
    response.end(JSON.stringify(info()));
  };
}

function listen(server: http.Server, port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      if (error.code === 'EADDRINUSE' || error.code === 'EACCES') resolve(false);
      else reject(error);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve(true);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, AGENT_HOST);
  });
}

/**
 * The agent's local server on 127.0.0.1: discovery over plain HTTP, the protocol over
 * WebSocket. The handshake's Origin decides who may talk; versions, size and rate limits and
 * one `sign` at a time per connection are enforced here, the work is the handlers'.
 */
export async function startAgentServer(options: AgentServerOptions): Promise<AgentServer> {
  const limits = options.limits ?? DEFAULT_AGENT_SERVER_LIMITS;
  let port = 0;
  const server = http.createServer(
    discoveryHandler(() => ({
      name: options.agent.name,
      version: options.agent.version,
      protocolVersions: SUPPORTED_AGENT_PROTOCOL_VERSIONS,
      port,
    })),
  );
  let bound = false;
  for (const candidate of options.ports) {
    if (await listen(server, candidate)) {
      bound = true;
      break;
    }
  }
  if (!bound) {
    throw new ConfigurationError(
      `cannot listen on ${AGENT_HOST}: ports ${options.ports.join(', ')} are all taken (by another program, or an ESign Agent of another user); free one, or set "port" in the settings`,
    );
  }
  port = (server.address() as AddressInfo).port;

  const connections = new Set<Connection>();
  const sockets = new WebSocketServer({
    server,
    maxPayload: limits.maxMessageBytes,
    // A handshake without a web origin (not a browser page) is refused outright.
    verifyClient: (info: { origin?: string }) => OriginApprovals.canonical(info.origin) !== null,
  });
  let events = 0;

  const send = (connection: Connection, message: AgentOutgoing) => {
    if (connection.socket.readyState === connection.socket.OPEN) {
      connection.socket.send(JSON.stringify(message));
    }
  };

  const stopTokens = options.handlers.onTokensChanged(() => {
    const tokens = options.handlers.tokens();
    for (const connection of connections) {
      if (connection.version === null) continue;
      events++;
      send(connection, { id: `evt-${events}`, type: 'tokens.changed', tokens });
    }
  });
  const stopRevoke = options.approvals.onRevoke((origin) => {
    for (const connection of connections) {
      if (connection.origin !== origin) continue;
      // As for a refused origin: the page learns why before the socket closes.
      send(
        connection,
        errorFrame(
          null,
          new AgentFailure('ORIGIN_NOT_ALLOWED', `${origin} was revoked by the user`),
        ),
      );
      connection.socket.close(CLOSE_ORIGIN_REFUSED, 'origin revoked');
    }
  });

  const withinRate = (connection: Connection): boolean => {
    const now = Date.now();
    connection.tokens = Math.min(
      limits.burst,
      connection.tokens + ((now - connection.refilledAt) / 1000) * limits.messagesPerSecond,
    );
    connection.refilledAt = now;
    if (connection.tokens < 1) return false;
    connection.tokens -= 1;
    return true;
  };

  const answer = async (connection: Connection, text: string): Promise<void> => {
    const parsed = parseAgentMessage(text);
    if (!parsed.ok) {
      send(connection, errorFrame(parsed.id, new AgentFailure('BAD_REQUEST', parsed.reason)));
      return;
    }
    const message = parsed.message;
    if (!isAgentRequest(message)) {
      send(
        connection,
        errorFrame(message.id, new AgentFailure('BAD_REQUEST', `${message.type} is not a request`)),
      );
      return;
    }
    if (!(await connection.admitted)) {
      send(
        connection,
        errorFrame(
          message.id,
          new AgentFailure('ORIGIN_NOT_ALLOWED', `${connection.origin} is not allowed`),
        ),
      );
      return;
    }
    try {
      if (message.type === 'hello') {
        const version = negotiateAgentProtocolVersion(message.versions);
        if (version === null) {
          send(connection, {
            ...errorFrame(
              message.id,
              new AgentFailure('UNSUPPORTED_VERSION', 'no protocol version in common'),
            ),
            supportedVersions: [...SUPPORTED_AGENT_PROTOCOL_VERSIONS],
          });
          return;
        }
        connection.version = version;
        send(connection, { id: message.id, type: 'hello.ok', version, agent: options.agent });
        return;
      }
      if (connection.version === null) {
        throw new AgentFailure('BAD_REQUEST', 'hello must come first');
      }
      if (message.type === 'certificates.list') {
        const certificates = await options.handlers.listCertificates(connection.origin);
        send(connection, { id: message.id, type: 'certificates.list.result', certificates });
        return;
      }
      if (message.requester.origin !== connection.origin) {
        throw new AgentFailure(
          'BAD_REQUEST',
          `requester.origin ${message.requester.origin} is not this page's origin`,
        );
      }
      if (connection.signing) throw new AgentFailure('BUSY', 'another sign request is pending');
      connection.signing = true;
      try {
        const result = await options.handlers.sign(message, connection.origin);
        send(connection, { id: message.id, type: 'sign.result', ...result });
      } finally {
        connection.signing = false;
      }
    } catch (error) {
      if (!(error instanceof AgentFailure))
        options.log?.(`request ${message.type} failed: ${String(error)}`);
      send(connection, errorFrame(message.id, error));
    }
  };

  sockets.on('connection', (socket, request) => {
    const origin = OriginApprovals.canonical(request.headers.origin)!;
    const connection: Connection = {
      socket,
      origin,
      admitted: options.approvals.admit(origin).catch(() => false),
      version: null,
      signing: false,
      tokens: limits.burst,
      refilledAt: Date.now(),
    };
    connections.add(connection);
    void connection.admitted.then((admitted) => {
      if (admitted) return;
      send(
        connection,
        errorFrame(null, new AgentFailure('ORIGIN_NOT_ALLOWED', `${origin} is not allowed`)),
      );
      socket.close(CLOSE_ORIGIN_REFUSED, 'origin not allowed');
    });
    socket.on('message', (data, isBinary) => {
      if (!withinRate(connection)) {
        send(connection, errorFrame(null, new AgentFailure('RATE_LIMITED', 'too many requests')));
        return;
      }
      if (isBinary) {
        send(
          connection,
          errorFrame(null, new AgentFailure('BAD_REQUEST', 'messages are JSON text')),
        );
        return;
      }
      void answer(connection, data.toString());
    });
    socket.on('close', () => connections.delete(connection));
    socket.on('error', () => socket.terminate());
  });

  return {
    port,
    close: async () => {
      stopTokens();
      stopRevoke();
      for (const connection of connections) connection.socket.terminate();
      await new Promise<void>((resolve) => sockets.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
