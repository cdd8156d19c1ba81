import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AGENT_HOST,
  type AgentDiscovery,
  type AgentInfo,
  SUPPORTED_AGENT_PROTOCOL_VERSIONS,
} from '@esign/shared';
import { WebSocketServer } from 'ws';
import { ConfigurationError } from './errors';
import { OriginApprovals } from './originApprovals';
import { PageConnection, type RateLimit } from './pageConnection';
import { type AgentRequestHandlers, answerFrame } from './requestRouting';

export interface AgentServerLimits extends RateLimit {
  /** Largest frame a page may send (requests are small; a certificate list goes the other way). */
  maxMessageBytes: number;
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

/** Listens on the first port of the list that is free; the port had. */
async function listenOnFirstFree(server: http.Server, ports: readonly number[]): Promise<number> {
  for (const candidate of ports) {
    if (await listen(server, candidate)) return (server.address() as AddressInfo).port;
  }
  throw new ConfigurationError(
    `cannot listen on ${AGENT_HOST}: ports ${ports.join(', ')} are all taken (by another program, or an ESign Agent of another user); free one, or set "port" in the settings`,
  );
}

/** Tells every connection that said hello of the tokens now present. */
function announceTokens(
  connections: Iterable<PageConnection>,
  handlers: AgentRequestHandlers,
): () => void {
  let events = 0;
  return handlers.onTokensChanged(() => {
    const tokens = handlers.tokens();
    for (const connection of connections) {
      if (connection.version === null) continue;
      events++;
      connection.send({ id: `evt-${events}`, type: 'tokens.changed', tokens });
    }
  });
}

/** Closes the connections of an origin the user revokes, as for a refused one. */
function closeRevoked(
  connections: Iterable<PageConnection>,
  approvals: OriginApprovals,
): () => void {
  return approvals.onRevoke((origin) => {
    for (const connection of connections) {
      if (connection.origin === origin) {
        connection.close(`${origin} was revoked by the user`, 'origin revoked');
      }
    }
  });
}

/**
 * The agent's local server on 127.0.0.1: discovery over plain HTTP, the protocol over
 * WebSocket. The handshake's Origin decides who may talk (PageConnection admits it), each frame
 * is answered by requestRouting; the size and rate limits are enforced here, the work is the
 * handlers'.
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
  port = await listenOnFirstFree(server, options.ports);

  const connections = new Set<PageConnection>();
  const sockets = new WebSocketServer({
    server,
    maxPayload: limits.maxMessageBytes,
    // A handshake without a web origin (not a browser page) is refused outright.
    verifyClient: (info: { origin?: string }) => OriginApprovals.canonical(info.origin) !== null,
  });
  const stopTokens = announceTokens(connections, options.handlers);
  const stopRevoke = closeRevoked(connections, options.approvals);
  const context = {
    agent: options.agent,
    handlers: options.handlers,
    ...(options.log ? { log: options.log } : {}),
  };

  sockets.on('connection', (socket, request) => {
    const origin = OriginApprovals.canonical(request.headers.origin)!;
    const connection = new PageConnection(socket, origin, options.approvals, limits);
    connections.add(connection);
    socket.on('message', (data, isBinary) => {
      if (!connection.withinRate()) connection.fail(null, 'RATE_LIMITED', 'too many requests');
      else if (isBinary) connection.fail(null, 'BAD_REQUEST', 'messages are JSON text');
      else void answerFrame(connection, data.toString(), context);
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
